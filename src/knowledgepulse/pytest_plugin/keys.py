"""What the hooks share with the items, apart so that the hooks import nothing heavy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from knowledgepulse.errors import NO_VALUE, Setting

if TYPE_CHECKING:
    from knowledgepulse.pytest_plugin.eval_file import EvalSpec
    from knowledgepulse.pytest_plugin.items import Tally
    from knowledgepulse.pytest_plugin.report import Reporting, SessionRun

OPTIONS_KEY: pytest.StashKey[EvalSpec] = pytest.StashKey()
"""The ``--kp-suite``/``--kp-preset`` suite (and ``--kp-task`` task), once loaded."""
TALLIES_KEY: pytest.StashKey[dict[str, Tally]] = pytest.StashKey()
"""What the items of each evaluation ran, by evaluation, for the session's summary."""
REPORTING_KEY: pytest.StashKey[Reporting] = pytest.StashKey()
"""What ``--kp-report``, ``--kp-baseline`` and ``--kp-fail-on`` ask for, once checked."""
RUN_KEY: pytest.StashKey[SessionRun] = pytest.StashKey()
"""With a report or a gate: every case the items ran, in order, as one run."""

MARKER = "kp"
"""The marker of every evaluation case, so ``-m`` selects evaluations as pytest-mypy's ``mypy``."""


OPTIONS = {
    "suite": "--kp-suite",
    "load_suite": "--kp-suite FILE",
    "preset": "--kp-preset",
    "task": "--kp-task",
    "plugins": "--kp-plugin",
    "output": "--kp-report",
    "output_format": "--kp-report-format",
    "baseline": "--kp-baseline",
    "fail_on": "--kp-fail-on",
    "tolerance": "--kp-tolerance",
}
"""The plugin's options by the library parameters its errors name (``load_evaluation``'s, the
report's and the baseline gate's)."""


REPORT_INI_KEYS = {
    "output": "kp_report",
    "output_format": "kp_report_format",
    "baseline": "kp_baseline",
    "fail_on": "kp_fail_on",
    "tolerance": "kp_tolerance",
}
"""The ini key of each report setting (by the library parameter an error names); each is its
option's ``dest`` too."""


def option_of(setting: Setting) -> str:
    """A setting a library error names, as pytest's command line spells it."""
    option = OPTIONS.get(setting.name)
    if option is None:
        return str(setting)
    return option if setting.value is NO_VALUE else f"{option} {setting.value}"


class EvalWarning(UserWarning):
    """A warning about a case or a case file (a case id used twice); it fails nothing.

    Shown in pytest's warnings summary at the case file's line;
    ``-W error::knowledgepulse.pytest_plugin.EvalWarning`` makes it fail the case.
    """
