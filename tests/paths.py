"""Where the tests' data lies inside the repository."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO / "corpora"
"""Real agent traces (tau-bench, Reflexion on HotpotQA; MIT): see corpora/README.md."""
