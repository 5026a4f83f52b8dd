"""pytest plugin: evaluation cases as test items, so pytest gives the exit code and the reports.

Loaded in every pytest session (``pytest11``): an evaluation file (``*.kp.yaml``), or with
``--kp-suite FILE`` each case file given, becomes one item per case. These hooks look at names
and options only; :mod:`.items` is imported when there is something to evaluate.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from knowledgepulse.pytest_plugin.keys import (
    MARKER,
    OPTIONS_KEY,
    REPORT_INI_KEYS,
    REPORTING_KEY,
    RUN_KEY,
    TALLIES_KEY,
    EvalWarning,
)

__all__ = ["EvalWarning"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--kp-suite``/``--kp-preset`` options and the ``kp_eval_files`` ini patterns."""
    group = parser.getgroup("knowledgepulse", "knowledgepulse evaluations")
    group.addoption(
        "--kp-suite",
        metavar="FILE",
        help="Evaluate the case files (JSON, JSONL or YAML) given as arguments with this suite "
        "file: one test per case.",
    )
    group.addoption(
        "--kp-preset",
        metavar="NAME",
        help="As --kp-suite, with a built-in suite: standard, strict or operation-focused.",
    )
    group.addoption(
        "--kp-task",
        metavar="MODULE:FUNCTION",
        help="With --kp-suite or --kp-preset: call this workflow for each case's output "
        "(module:function or path/to/file.py:function) instead of scoring its `actual`.",
    )
    group.addoption(
        "--kp-plugin",
        metavar="MODULE",
        action="append",
        default=[],
        help="With --kp-suite: import this scorer plugin (a module or path/to/file.py) before "
        "the suite is read, so its custom scorer types can be used; repeatable.",
    )
    group.addoption(
        "--kp-redact",
        action="store_true",
        help="Clean what failures show (and --junitxml keeps) of personal data too: e-mails, "
        "phone numbers, cards, IBANs... (as kp eval --redact); the scorers see the raw output.",
    )
    _add_report_options(parser, group)
    parser.addini(
        "kp_eval_files",
        type="args",
        default=["*.kp.yaml", "*.kp.yml"],
        help="File name patterns of knowledgepulse evaluation files (a suite and case files).",
    )


def _add_report_options(parser: pytest.Parser, group: pytest.OptionGroup) -> None:
    """``--kp-report``, ``--kp-baseline`` and the gate's options, each with its ini key."""
    group.addoption(
        "--kp-report",
        metavar="FILE",
        help="Write the report of the evaluation cases run, as kp eval -o FILE does; its "
        "format from the suffix (.json, .xml: JUnit, .md, .html), else JSON. ini: kp_report.",
    )
    group.addoption(
        "--kp-report-format",
        choices=("json", "junit", "markdown", "html"),
        help="The --kp-report format, whatever its suffix. ini: kp_report_format.",
    )
    group.addoption(
        "--kp-baseline",
        metavar="FILE",
        help="A kp eval JSON report of an earlier run (or a --kp-report one): compare the cases "
        "with it, add the comparison to the report, and fail only on a case that passed there "
        "or is not in it (see --kp-fail-on). ini: kp_baseline.",
    )
    group.addoption(
        "--kp-fail-on",
        choices=("failure", "regression", "never"),
        help="Which failing cases fail their test, as kp eval --fail-on; the others are "
        "xfailed [default: regression with --kp-baseline, else failure]. ini: kp_fail_on.",
    )
    group.addoption(
        "--kp-tolerance",
        type=float,
        metavar="DELTA",
        help="With --kp-baseline: score changes at most this large count as unchanged, as kp "
        "eval --tolerance. ini: kp_tolerance.",
    )
    for name, said in (
        ("kp_report", "--kp-report: the report file, relative to this file"),
        ("kp_report_format", "--kp-report-format: json, junit, markdown or html"),
        ("kp_baseline", "--kp-baseline: the baseline report, relative to this file"),
        ("kp_fail_on", "--kp-fail-on: failure, regression or never"),
        ("kp_tolerance", "--kp-tolerance: the largest score change counted as unchanged"),
    ):
        parser.addini(name, type="string", default="", help=said)


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``kp`` marker every evaluation case carries (``--strict-markers`` knows it)."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}: an evaluation case of a knowledgepulse evaluation file or --kp-suite; "
        f"-m {MARKER} runs only them, -m 'not {MARKER}' the other tests.",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Load the ``--kp-suite``/``--kp-preset`` suite (and ``--kp-task``) once, before collection.

    Raises:
        pytest.UsageError: a wrong mix of options, or a suite or task that cannot be used.
    """
    config = session.config
    if any(config.getoption(name) is not None for name in REPORT_INI_KEYS.values()) or any(
        config.getini(name) for name in REPORT_INI_KEYS.values()
    ):
        from knowledgepulse.pytest_plugin import report  # noqa: PLC0415 - on demand

        if (reporting := report.from_options(config)) is not None:
            config.stash[REPORTING_KEY] = reporting
    suite_path, preset_name = config.getoption("kp_suite"), config.getoption("kp_preset")
    task, plugins = config.getoption("kp_task"), config.getoption("kp_plugin")
    if suite_path is None and preset_name is None:
        if task is not None:
            raise pytest.UsageError("--kp-task needs a suite: give --kp-suite FILE or --kp-preset")
        if plugins:
            raise pytest.UsageError(
                "--kp-plugin needs --kp-suite FILE; in an evaluation file, list it under 'plugins'"
            )
        return
    if suite_path is not None and preset_name is not None:
        raise pytest.UsageError("give one of --kp-suite FILE or --kp-preset NAME, not both")
    from knowledgepulse.pytest_plugin.items import from_options  # noqa: PLC0415 - on demand

    redact = config.getoption("kp_redact")
    config.stash[OPTIONS_KEY] = from_options(suite_path, preset_name, task, plugins, redact=redact)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Which suite ``--kp-suite``/``--kp-preset`` evaluates the case files with."""
    if (spec := config.stash.get(OPTIONS_KEY, None)) is None:
        return None
    suite = spec.suite
    called = f", calling {config.getoption('kp_task')}" if spec.task is not None else ""
    return (
        f"knowledgepulse: suite {suite.name or suite.source} ({len(suite.scorers)} scorers) "
        f"for the case files given as arguments{called}"
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """An evaluation file, or (with ``--kp-suite``) a case file named on the command line."""
    config = parent.config
    is_eval_file = any(fnmatch.fnmatch(file_path.name, p) for p in config.getini("kp_eval_files"))
    named_case_file = OPTIONS_KEY in config.stash and parent.session.isinitpath(file_path)
    if not is_eval_file and not named_case_file:
        return None
    from knowledgepulse.pytest_plugin import items  # noqa: PLC0415 - on demand

    if is_eval_file:
        return items.EvalFile.from_parent(parent, path=file_path)
    return items.case_file(parent, file_path)


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what is not run
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """With a report or a gate: the cases selected share one suite, the one their run records.

    Raises:
        pytest.UsageError: they use different suites, which one report cannot hold.
    """
    if REPORTING_KEY not in session.config.stash:
        return
    from knowledgepulse.pytest_plugin.items import CaseItem  # noqa: PLC0415 - on demand
    from knowledgepulse.pytest_plugin.report import SessionRun, one_suite  # noqa: PLC0415

    cases = [(item.spec.source, item.spec.suite) for item in items if isinstance(item, CaseItem)]
    if (suite := one_suite(cases)) is not None:
        session.config.stash[RUN_KEY] = SessionRun(suite)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With ``--kp-report`` or ``--kp-baseline``: compare the run, write its report."""
    config = session.config
    if (reporting := config.stash.get(REPORTING_KEY, None)) is None:
        return
    from knowledgepulse.pytest_plugin.report import finish  # noqa: PLC0415 - on demand

    config.stash[_REPORT_LINES] = list(finish(reporting, config.stash.get(RUN_KEY, None)))


_REPORT_LINES: pytest.StashKey[list[str]] = pytest.StashKey()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Per evaluation: pass rate, weighted mean and each scorer's mean over the cases run.

    With a report or a baseline: where the report went, the comparison and the gate's verdict.
    """
    tallies = config.stash.get(TALLIES_KEY, None)
    reported = config.stash.get(_REPORT_LINES, [])
    if not tallies and not reported:
        return
    terminalreporter.section("knowledgepulse evaluations")
    if tallies:
        from knowledgepulse.pytest_plugin.items import summary_lines  # noqa: PLC0415 - on demand

        for line in summary_lines(tallies):
            terminalreporter.line(line)
    for line in reported:
        terminalreporter.line(line)
