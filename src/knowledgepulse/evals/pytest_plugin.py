"""pytest plugin: evaluation suites as test items (being written)."""
