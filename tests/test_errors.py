"""Errors: an optional import interrupted by Ctrl-C is an interrupt, not a missing package."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from knowledgepulse.errors import import_optional

# What numpy's and onnxruntime's extensions do when Ctrl-C arrives while they load: the
# KeyboardInterrupt becomes an ImportError.
INTERRUPTED_EXTENSION = """
import os, signal, time
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
except KeyboardInterrupt:
    raise ImportError("initialization failed") from None
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_an_optional_import_is_an_interrupt_not_a_missing_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT while an optional module imports raises KeyboardInterrupt: kp stops (exit 130)."""
    (tmp_path / "kp_interrupted_extension.py").write_text(INTERRUPTED_EXTENSION)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        import_optional("kp_interrupted_extension", lambda error: RuntimeError("missing"))
    sys.modules.pop("kp_interrupted_extension", None)


def test_a_missing_optional_module_is_the_caller_s_error() -> None:
    """Without an interrupt, a module that cannot be imported is ``missing(error)``."""
    with pytest.raises(RuntimeError, match="missing: No module named 'kp_no_such_module'"):
        import_optional("kp_no_such_module", lambda error: RuntimeError(f"missing: {error}"))


def test_an_object_to_trace_cannot_convert_raises_a_public_knowledgepulse_error() -> None:
    """to_trace(None) raises knowledgepulse.errors.ConversionError, catchable without internals."""
    from knowledgepulse.errors import ConversionError, KnowledgePulseError
    from knowledgepulse.integrations.langchain import to_trace

    with pytest.raises(ConversionError) as raised:
        to_trace(None)
    assert isinstance(raised.value, KnowledgePulseError)
    assert isinstance(raised.value, ValueError)  # as before: callers catching ValueError still do
