"""Importing the user's modules by name (a task's, a plugin's): tried in a child process first.

A spec names a module (found from the working directory too) or a .py file, imported under its
own name with its directory first on sys.path, as pytest does, so the modules beside it import
each other and a file named twice is imported once.

The user's module may never finish importing (an endless loop, a wait) or may end the process
(``os._exit(0)``: a run that reports nothing and exits 0, which CI reads as a pass). Neither can
be caught in the process that imports it, so the import is first tried in a child process,
bounded in time; only one that finishes there is imported here. The cost: the module's import
time, twice, and its import-time side effects happen twice.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from knowledgepulse._util.raised import shown_path, user_frame
from knowledgepulse.errors import PluginLoadError

IMPORT_TIMEOUT_S = 300.0
"""The longest the user's module may take to import: minutes for a heavy one, never a hung CI."""
_FINISHED = 86
"""The child's exit code once the import has finished (raised or not): any other is the module's."""
_TRY = (
    "import json, os, sys\n"
    "sys.path[:] = json.loads(sys.argv[2])\n"
    "from knowledgepulse._util.user_modules import _import\n"
    "try:\n"
    "    _import(sys.argv[1], 'child')\n"
    "except BaseException:\n"
    "    pass  # the import in kp's own process says what went wrong\n"
    f"os._exit({_FINISHED})\n"
)


def import_user_module(spec: str, *, what: str) -> ModuleType:
    """The module or ``.py`` file ``spec`` names, imported here once it has imported in a child.

    ``what`` says how errors name it (``plugin 'x.py'``). A module imported already is not
    tried again.

    Raises:
        PluginLoadError: the spec names nothing importable, or the import raised, did not finish
            within :data:`IMPORT_TIMEOUT_S`, or ended the process.
    """
    if sys.modules.get(Path(spec).stem if spec.endswith(".py") else spec) is None:
        _try_in_child(spec, what, IMPORT_TIMEOUT_S)
    return _import(spec, what)


def _try_in_child(spec: str, what: str, timeout: float) -> None:
    if not sys.executable or getattr(sys, "frozen", False):  # no interpreter to start
        return
    command = [sys.executable, "-c", _TRY, spec, json.dumps(sys.path)]
    quiet = subprocess.DEVNULL  # its prints come again from the import here
    try:
        done = subprocess.run(
            command, stdin=quiet, stdout=quiet, stderr=quiet, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise PluginLoadError(
            f"{what}: importing it did not finish within {timeout:g} s; fix the module (an "
            "endless loop, or a wait, at import?)"
        ) from None
    if done.returncode != _FINISHED:
        raise PluginLoadError(
            f"{what}: it exited the process during import (exit code {done.returncode}), "
            "which would end kp with no report; fix the module (run it with python)"
        )


def _import(spec: str, what: str) -> ModuleType:
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(Path(spec), what)
    # `kp` is a console script, so unlike `python -m` it does not put the working directory on
    # sys.path; a task module beside the case files should be found all the same.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as error:
        if error.name is not None and (spec == error.name or spec.startswith(f"{error.name}.")):
            raise PluginLoadError(
                f"{what}: no module named {error.name!r} here or among the installed "
                "packages; check the name, or give the path of a .py file"
            ) from None
        raise _import_failed(what, error) from None
    except (Exception, SystemExit) as error:  # the user's module may raise anything, exit too
        raise _import_failed(what, error) from None


def _import_file(path: Path, what: str) -> ModuleType:
    if path.suffix != ".py":
        raise PluginLoadError(f"{what}: a file must end in .py")
    if not path.is_file():
        raise PluginLoadError(f"{what}: no such file")
    resolved = path.resolve()
    directory = str(resolved.parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = resolved.stem
    if not name.isidentifier():
        raise PluginLoadError(
            f"{what}: {resolved.name} is not an importable module name; rename it "
            "(letters, digits and underscores)"
        )
    loaded = sys.modules.get(name)
    if loaded is not None:
        file = getattr(loaded, "__file__", None)
        if file is not None and Path(file).resolve() == resolved:
            return loaded
        raise PluginLoadError(
            f"{what}: a module named {name!r} is already imported from "
            f"{file or 'elsewhere'}; rename the file"
        )
    module_spec = importlib.util.spec_from_file_location(name, resolved)
    if module_spec is None or module_spec.loader is None:  # pragma: no cover - .py files load
        raise PluginLoadError(f"{what}: cannot be imported")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # the user's module may raise anything, exit too
        del sys.modules[name]
        raise _import_failed(what, error) from None
    return module


def _import_failed(what: str, error: BaseException) -> PluginLoadError:
    text = str(error).strip().split("\n", 1)[0]
    where = _user_line(error)
    if isinstance(error, SyntaxError) and error.msg:
        text = error.msg  # its str() repeats the file and line, said below
    at = f" (at {where})" if where is not None else ""
    return PluginLoadError(
        f"{what}: importing it raised {type(error).__name__}: {text}{at}; fix the module "
        "(run it with python to see the traceback)"
    )


def _user_line(error: BaseException) -> str | None:
    """``wf.py:2``: the line of the user's code an import failed at, or ``None``.

    A syntax error's own place; else the deepest frame of a file that is neither Python's, an
    installed package's nor kp's (an import of a missing package is named at the user's line
    that imports it, not inside importlib).
    """
    if isinstance(error, SyntaxError) and error.filename and error.lineno:
        return f"{shown_path(error.filename)}:{error.lineno}"
    found = user_frame(error)
    return None if found is None else f"{shown_path(found[0])}:{found[1]}"
