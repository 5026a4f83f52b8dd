"""Library errors name Python parameters; ``kp`` shows the same errors with its options."""

from __future__ import annotations

import logging
from pathlib import Path

import click
import pytest

from knowledgepulse.cli.main import SPELT_AS, _PrintableFormatter, cli, flag_of
from knowledgepulse.cli.redact import redact_command
from knowledgepulse.errors import EmbedderUnavailableError, Setting
from tests.cli.conftest import KpRunner
from tests.novelty.test_ring_file import interrupted_save

TRACES = Path(__file__).parents[2] / "examples" / "traces" / "traces.jsonl"
CHAT = Path(__file__).parents[2] / "examples" / "datasets" / "openai_chat.jsonl"


@pytest.mark.parametrize(
    ("setting", "python", "flag"),
    [
        (Setting("device", "cuda:3"), "device='cuda:3'", "--device cuda:3"),
        (Setting("max_elements"), "max_elements", "--cache-size"),
        (Setting("read_only", False), "read_only=False", "without --frozen"),
        (Setting("cache_dir", None), "cache_dir=None", "--no-cache"),
        (Setting("dtype", "float16"), "dtype='float16'", "dtype='float16'"),
    ],
)
def test_a_setting_is_spelt_by_python_and_by_kp(setting: Setting, python: str, flag: str) -> None:
    """Python spells a parameter and its value; kp its option; one kp lacks stays Python's."""
    assert (str(setting), flag_of(setting)) == (python, flag)


def test_a_setting_is_spelt_by_the_running_commands_option() -> None:
    """In kp redact, rules_file is its --rules; outside a command, the first command's option."""
    with click.Context(redact_command):
        assert flag_of(Setting("rules_file")) == "--rules"
    assert flag_of(Setting("rules_file")) == "--redact-rules"
    assert flag_of(Setting("annotate", False)) == "without --annotate"


def test_a_users_value_is_shown_as_given() -> None:
    """Only the settings are spelt again: a value that looks like a parameter is left alone."""
    error = EmbedderUnavailableError(
        "the file ", Setting("model_path", "device='cpu' --model.onnx"), " is bad"
    )
    assert error.message_with(flag_of) == "the file --model device='cpu' --model.onnx is bad"


def test_every_flag_is_an_option_of_kp() -> None:
    """Each option the table names is one kp takes (a misspelt flag would mislead)."""
    options = {
        option
        for name in cli.list_commands(None)  # type: ignore[arg-type]
        for parameter in cli.get_command(None, name).params  # type: ignore[arg-type, union-attr]
        for option in (*parameter.opts, *parameter.secondary_opts)
    }
    named = {word for flag in SPELT_AS.values() for word in flag.split() if word.startswith("--")}
    assert named <= options


def test_a_device_kp_cannot_use_is_named_by_its_option(
    kp: KpRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kp score --device cuda`` without a GPU: the error speaks of --device, as before."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    run = kp("score", str(TRACES), "--device", "cuda")
    assert run.code == 2
    assert run.err.startswith("kp: error: --device cuda: no CUDA GPU found")
    assert "use --device cpu, or install" in run.err
    assert "device='" not in run.err


def test_a_cache_too_big_for_memory_is_named_by_its_options(kp: KpRunner) -> None:
    """``--cache-size`` too large: kp names --cache-size and --cache FILE, not max_elements."""
    run = kp("score", str(TRACES), "--cache-size", "1000000000")
    assert run.code == 2
    assert "give a smaller --cache-size, or keep the cache in a ring file (--cache FILE)" in run.err


def test_a_frozen_run_on_an_interrupted_save_says_run_without_frozen(
    kp: KpRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save cut short needs a writer: kp says to open it once without --frozen."""
    path = tmp_path / "c.kpcache"
    interrupted_save(path, monkeypatch)
    run = kp("score", str(TRACES), "--cache", str(path), "--frozen")
    assert run.code == 2
    assert run.err.rstrip().endswith("open it once with write permission (without --frozen)")


def test_a_logged_library_error_is_spelt_with_options() -> None:
    """Novelty falling back to 0.5 logs the error; kp's log line names its options too."""
    error = EmbedderUnavailableError("try fewer ", Setting("workers"), " please")
    record = logging.LogRecord(
        "knowledgepulse", logging.WARNING, __file__, 1, "novelty: %s", (error,), None
    )
    said = _PrintableFormatter("%(message)s").format(record)
    assert said == "kp: novelty: try fewer --workers please"
    assert record.args == (error,)  # the record other handlers see is left as it was


def test_a_parameter_conflict_is_a_usage_error_naming_the_options(kp: KpRunner) -> None:
    """A library ParameterConflictError shows as the command's usage error, in kp's options."""
    run = kp("score", str(TRACES), "--no-embedder", "--embedder", "static")
    assert run.code == 2
    assert "Usage: kp score" in run.err
    assert (
        "Error: --model and --embedder choose the embedder, and --no-embedder asks for none; "
        "give one or the other"
    ) in run.err


def test_batch_size_without_an_embedder_is_refused_by_its_option(kp: KpRunner) -> None:
    """--batch-size with --no-embedder sizes nothing: a usage error naming both, not ignored."""
    run = kp("score", str(TRACES), "--no-embedder", "--batch-size", "4")
    assert run.code == 2
    assert (
        "--batch-size sets how many traces the model embeds at once; with --no-embedder" in run.err
    )


@pytest.mark.parametrize(
    ("data", "option", "shown"),
    [
        (TRACES, "--domain", "--domain ''"),
        (TRACES, "--domain-field", "--domain-field ''"),
        (CHAT, "--domain-field", "--domain-field ''"),
        (CHAT, "--task-field", "--task-field ''"),
        (TRACES, "--domain", "--domain '  '"),
    ],
)
def test_an_empty_domain_or_column_is_a_usage_error_whatever_the_input(
    kp: KpRunner, data: Path, option: str, shown: str
) -> None:
    """An empty --domain-field was a warning on a trace file and taken on rows; now exit 2."""
    value = shown.split(" ", 1)[1].strip("'")
    run = kp("score", str(data), "--no-embedder", option, value)
    assert run.code == 2
    assert run.err.startswith("Usage: kp score ")
    assert f"\nError: {shown}: give a " in run.err


@pytest.mark.parametrize("seconds", ["inf", "nan", "1e308"])
def test_a_ttl_of_no_finite_milliseconds_is_refused_as_ttl(
    kp: KpRunner, seconds: str, tmp_path: Path
) -> None:
    """--ttl inf (or seconds past a double in ms) is a usage error naming --ttl, not ttl_ms."""
    run = kp("score", str(TRACES), "--cache", str(tmp_path / "c.npz"), "--ttl", seconds)
    assert run.code == 2
    assert "Invalid value for '--ttl'" in run.err
    assert "ttl_ms" not in run.err
