"""Errors: an optional import interrupted by Ctrl-C is an interrupt, not a missing package; a
missing extra's install line fits how knowledgepulse was installed."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import knowledgepulse
from knowledgepulse.errors import (
    KnowledgePulseError,
    Location,
    cannot_import,
    distribution_of,
    import_optional,
    install_hint,
    missing_extra,
    not_installed,
    os_message,
)
from knowledgepulse.evals.cases import parse_case
from knowledgepulse.evals.report import load_report
from knowledgepulse.novelty.cache import VectorCache
from knowledgepulse.records.readers import read_records
from knowledgepulse.redact.config import load_rules
from knowledgepulse.value.profiles import load_profiles

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


# A package that is installed but fails as it loads: pyarrow built for numpy 1 beside numpy 2
# (the C extension's import_array() leaves this ImportError), or a shared library that is broken.
BROKEN_EXTENSION = 'raise ImportError("numpy.core.multiarray failed to import")'


def test_an_installed_module_that_fails_to_import_is_not_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its error is ``missing``'s type but says installed, its last line and the reinstall line."""
    (tmp_path / "kp_broken_extension.py").write_text(BROKEN_EXTENSION)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kp_broken_extension", raising=False)
    with pytest.raises(RuntimeError) as raised:
        import_optional("kp_broken_extension", lambda error: RuntimeError(f"missing: {error}"))
    message = str(raised.value)
    assert message.startswith(
        "kp_broken_extension is installed but cannot be imported: "
        "numpy.core.multiarray failed to import; "
    )
    assert "pip install -U --force-reinstall kp_broken_extension" in message
    assert "pip check" in message
    assert "missing" not in message
    assert raised.value.__cause__ is None  # raised from None: no traceback
    assert raised.value.__suppress_context__


def test_a_module_missing_inside_an_installed_package_is_not_the_package_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ModuleNotFoundError for another module (one it imports) means it is installed."""
    package = tmp_path / "kp_needs_absent"
    package.mkdir()
    (package / "__init__.py").write_text("import kp_absent_dependency\n")
    (package / "sub.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("kp_needs_absent", "kp_needs_absent.sub"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(
        RuntimeError,
        match=r"^kp_needs_absent is installed but cannot be imported: "
        r"No module named 'kp_absent_dependency'; ",
    ):
        import_optional("kp_needs_absent.sub", lambda error: RuntimeError(f"missing: {error}"))


def test_a_submodule_of_a_missing_package_is_missing() -> None:
    """``pyarrow.parquet`` without ``pyarrow``: the caller's install line, as before."""
    with pytest.raises(RuntimeError, match=r"^missing: No module named 'kp_no_such_package'"):
        import_optional("kp_no_such_package.sub", lambda error: RuntimeError(f"missing: {error}"))


def test_the_reinstall_line_names_the_pypi_package_not_the_module() -> None:
    """``yaml`` is installed by ``PyYAML``: that is the name pip takes."""
    error = ImportError("libyaml.so: cannot open shared object file")
    message = cannot_import(distribution_of("yaml"), error)
    assert message.startswith("PyYAML is installed but cannot be imported: libyaml.so: cannot")
    assert "pip install -U --force-reinstall PyYAML" in message


def test_only_a_module_not_found_for_the_module_or_a_package_above_it_is_not_installed() -> None:
    """``not_installed``: ModuleNotFoundError naming ``name`` or a parent, nothing else."""
    absent = ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")
    assert not_installed("pyarrow", absent)
    assert not_installed("pyarrow.parquet", absent)
    assert not not_installed("pyarrow_hotfix", absent)
    assert not not_installed(
        "pyarrow", ModuleNotFoundError("No module named 'numpy'", name="numpy")
    )
    assert not not_installed("pyarrow", ModuleNotFoundError("raised by hand"))
    assert not not_installed("pyarrow", ImportError("numpy.core.multiarray failed to import"))


def test_a_collector_whose_framework_fails_to_import_says_it_is_installed() -> None:
    """``kp.capture``'s frameworks: langchain-core that cannot import pydantic is not missing."""
    inside = ModuleNotFoundError("No module named 'pydantic'", name="pydantic")
    message = str(missing_extra("langchain-core", "langchain", inside, "langchain_core"))
    assert message.startswith("langchain-core is installed but cannot be imported: No module")
    absent = ModuleNotFoundError("No module named 'langchain_core'", name="langchain_core")
    message = str(missing_extra("langchain-core", "langchain", absent, "langchain_core"))
    assert message.startswith("this needs langchain-core, which is not installed")


def test_kp_reading_parquet_with_a_broken_pyarrow_says_it_is_installed(tmp_path: Path) -> None:
    """The user's case: one ``kp: error`` line that says reinstall, not install; no traceback."""
    fake = tmp_path / "site"
    (fake / "pyarrow").mkdir(parents=True)
    (fake / "pyarrow" / "__init__.py").write_text(BROKEN_EXTENSION)
    (fake / "pyarrow" / "parquet.py").write_text("")
    (tmp_path / "traces.parquet").write_bytes(b"PAR1")
    source = Path(knowledgepulse.__file__).parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), str(source)])}
    command = [sys.executable, "-m", "knowledgepulse.cli.main", "score", "traces.parquet"]
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(
        "kp: error: pyarrow is installed but cannot be imported: "
        "numpy.core.multiarray failed to import; "
    ), run.stderr
    assert "pip install -U --force-reinstall pyarrow" in run.stderr
    assert "not installed" not in run.stderr
    assert "Traceback" not in run.stderr


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


# A name a file may have on Linux: a newline would forge a message line, an escape colour it.
HOSTILE_NAME = "a\nkp: error: forged\x1b[31m"


def _wrong_format(path: Path) -> object:
    return list(read_records(path.with_name(path.name + ".parquet"), formats=("json",)))


def _rules(path: Path) -> object:
    return load_rules(path)


def _profiles(path: Path) -> object:
    return load_profiles(path)


def _missing_cache(path: Path) -> object:
    return VectorCache.open(path.with_name(path.name + ".missing"), read_only=True)


def _report(path: Path) -> object:
    return load_report(path)


def _case(path: Path) -> object:
    return parse_case({}, source=str(path))


def _os_error(path: Path) -> object:
    raise KnowledgePulseError(os_message(OSError(errno.ENOSPC, "No space left", str(path))))


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (_wrong_format, ""),
        (_rules, "[1, 2]\n{"),  # not read whole
        (_rules, "[1, 2]\n"),  # no mapping
        (_profiles, "[1, 2]\n"),
        (_missing_cache, ""),
        (_report, "[1, 2]\n{"),
        (_report, "[1, 2]\n"),  # no object
        (_report, '{"format": "knowledgepulse-eval-report/9"}'),  # a newer kp's
        (_report, '{"format": "other"}'),
        (_case, ""),
        (_os_error, ""),
    ],
)
def test_a_file_name_in_an_error_is_shown_on_one_line_its_controls_escaped(
    tmp_path: Path, call: Any, text: str
) -> None:
    """A file named with a newline and an escape is named as ``Location`` shows it.

    Before, these messages began with the raw name: its newline began a line of their own.
    """
    path = tmp_path / HOSTILE_NAME
    for made in (path, path.with_name(path.name + ".parquet")):
        made.write_text(text)
    with pytest.raises(KnowledgePulseError) as raised:
        call(path)
    message = str(raised.value)
    assert message.startswith(str(Location(str(path.parent / HOSTILE_NAME)))), message
    assert "\x1b" not in message
    assert "\nkp: error: forged" not in message
