"""Errors: an optional import interrupted by Ctrl-C is an interrupt, not a missing package; a
missing extra's install line fits how knowledgepulse was installed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import knowledgepulse
from knowledgepulse.errors import import_optional, install_hint

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


def test_installed_from_a_wheel_the_install_line_names_the_package(tmp_path: Path) -> None:
    """In site-packages (no checkout around it) the line is ``pip install 'knowledgepulse[x]'``:
    a wheel's user has no checkout to run ``pip install -e ".[x]"`` in."""
    package = tmp_path / "lib" / "python3.11" / "site-packages" / "knowledgepulse"
    package.mkdir(parents=True)
    assert install_hint("embeddings", package) == "pip install 'knowledgepulse[embeddings]'"


def test_a_src_folder_without_pyproject_is_no_checkout(tmp_path: Path) -> None:
    """A folder named src/ is a checkout only with the project's pyproject.toml beside it."""
    package = tmp_path / "src" / "knowledgepulse"
    package.mkdir(parents=True)
    assert install_hint("gpu", package) == "pip install 'knowledgepulse[gpu]'"
    (tmp_path / "pyproject.toml").write_text("[project]\n", "utf-8")
    assert install_hint("gpu", package) == 'pip install -e ".[gpu]" in the knowledgepulse checkout'


def test_run_from_this_checkout_the_install_line_is_the_editable_one() -> None:
    """The tests import knowledgepulse from the checkout: the default is the checkout's line."""
    assert Path(knowledgepulse.__file__).parent.parent.name == "src"
    assert install_hint("ray") == 'pip install -e ".[ray]" in the knowledgepulse checkout'
