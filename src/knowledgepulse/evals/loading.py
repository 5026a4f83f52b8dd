"""Loading the user's code by name: a task (``module:function``) and scorer plugins.

A spec names a module (found from the working directory too) or a ``.py`` file, imported under
its own name with its directory first on ``sys.path``, as pytest does, so the modules beside it
import each other and a file named twice is imported once. Every failure is a
:class:`~knowledgepulse.errors.PluginLoadError` naming the spec and the fix.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from knowledgepulse.errors import PluginLoadError
from knowledgepulse.evals.tasks import Task


def load_task(spec: str) -> Task:
    """The function a ``module:function`` or ``path/to/file.py:function`` spec names.

    Raises:
        PluginLoadError: the spec is malformed, its module cannot be imported, or it names
            nothing callable there.
    """
    where, colon, name = spec.rpartition(":")
    if not colon or not where or not name or (len(where) == 1 and where.isalpha()):
        raise PluginLoadError(
            f"task {spec!r}: give MODULE:FUNCTION or path/to/file.py:FUNCTION, e.g. "
            "workflow:summarise"
        )
    module = _import(where, what=f"task {spec!r}")
    found: Any = module
    for part in name.split("."):
        if not hasattr(found, part):
            names = [n for n in dir(module) if not n.startswith("_")]
            closest = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {closest[0]!r}?" if closest else ""
            raise PluginLoadError(f"task {spec!r}: {where} has no attribute {part!r}{hint}")
        found = getattr(found, part)
    if not callable(found):
        raise PluginLoadError(
            f"task {spec!r}: {name} is a {type(found).__name__}, not a function; name a "
            "function that takes a TaskInput and returns the output"
        )
    task: Task = found
    return task


def load_plugin(spec: str) -> ModuleType:
    """Import a plugin module or ``.py`` file, registering the scorers it defines.

    Raises:
        PluginLoadError: it cannot be found, or raises when imported.
    """
    return _import(spec, what=f"plugin {spec!r}")


def _import(spec: str, *, what: str) -> ModuleType:
    """The module ``spec`` names; ``what`` is how errors name the spec (``task 'x:y'``)."""
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(Path(spec), what)
    _working_directory_importable()
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
        if _same_file(loaded, resolved):
            return loaded
        raise PluginLoadError(
            f"{what}: a module named {name!r} is already imported from "
            f"{getattr(loaded, '__file__', None) or 'elsewhere'}; rename the file"
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


def _same_file(module: ModuleType, path: Path) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve() == path


def _working_directory_importable() -> None:
    # `kp` is a console script, so unlike `python -m` it does not put the working directory on
    # sys.path; a task module beside the case files should be found all the same.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _import_failed(what: str, error: BaseException) -> PluginLoadError:
    text = str(error).strip().split("\n", 1)[0]
    return PluginLoadError(
        f"{what}: importing it raised {type(error).__name__}: {text}; fix the module "
        "(run it with python to see the traceback)"
    )
