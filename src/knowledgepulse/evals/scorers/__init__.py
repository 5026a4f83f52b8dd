"""The built-in scorers; importing this package registers them."""
