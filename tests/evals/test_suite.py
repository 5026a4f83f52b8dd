"""Suite files: loading, defaults, and every suite error, collected and located."""

from __future__ import annotations

import gzip
import io
import json
import textwrap
from pathlib import Path

import pytest

from knowledgepulse.errors import InputFileError, SuiteError
from knowledgepulse.evals.report import ReportSuite
from knowledgepulse.evals.suite import Suite, is_suite_file, load_suite, suite_from_dict
from tests.evals.builders import make_suite

EXAMPLE_SUITE = Path(__file__).parents[2] / "examples" / "evals" / "suite.yaml"


def write(tmp_path: Path, text: str, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as raised:
        load_suite(path)
    return [str(problem) for problem in raised.value.problems]


def test_weight_and_threshold_default_to_one_and_the_scorers_default() -> None:
    """An entry with only a type gets weight 1.0 and its scorer's default threshold."""
    suite = make_suite({"type": "target-block-precision"}, {"type": "content-quality"})
    assert [(s.key, s.weight, s.threshold) for s in suite.scorers] == [
        ("target-block-precision", 1.0, 0.75),
        ("content-quality", 1.0, 0.6),
    ]


def test_yaml_suite_loads_with_name_description_and_params(tmp_path: Path) -> None:
    """Top-level name and description are kept; params reach the scorer validated."""
    path = write(
        tmp_path,
        """
        name: mine
        description: checks things
        scorers:
          - type: response-time
            weight: 0.5
            params: {max_acceptable_ms: 2000}
        """,
    )
    suite = load_suite(path)
    assert (suite.name, suite.description, suite.source) == ("mine", "checks things", str(path))
    entry = suite.scorers[0]
    assert (entry.weight, entry.threshold) == (0.5, 1.0)
    assert entry.scorer.params.model_dump() == {"max_acceptable_ms": 2000.0}


def test_json_suite_files_load_too(tmp_path: Path) -> None:
    """A suite may be written as JSON, with a $schema key for editors."""
    path = write(
        tmp_path,
        '{"$schema": "suite.schema.json", "scorers": [{"type": "operation-accuracy"}]}',
        "suite.json",
    )
    assert [e.key for e in load_suite(path).scorers] == ["operation-accuracy"]


def test_a_json_suite_s_problems_name_their_lines(tmp_path: Path) -> None:
    """A JSON suite over several lines: each problem at its key's line, as in YAML, not line 1."""
    path = tmp_path / "suite.json"
    suite = {"scorers": [{"type": "operation-accuracy"}, {"type": "nope", "weight": -1}]}
    path.write_text(json.dumps(suite, indent=2))
    with pytest.raises(SuiteError) as raised:
        load_suite(path)
    lines = path.read_text().splitlines()
    found = {p.path: lines[(p.location.line or 0) - 1].strip() for p in raised.value.problems}
    assert found == {"scorers[1].type": '"type": "nope",', "scorers[1].weight": '"weight": -1'}


def test_resolved_suite_lists_every_parameter_with_defaults_filled_in() -> None:
    """The report's suite gives key, type, weight, threshold and all params, defaults included."""
    suite = make_suite(
        {"type": "content-quality", "name": "cq", "params": {"ignore_case": True}}, name="s"
    )
    assert ReportSuite.of(suite).model_dump() == {
        "name": "s",
        "description": None,
        "source": "<suite>",
        "scorers": [
            {
                "key": "cq",
                "type": "content-quality",
                "name": "cq",
                "weight": 1.0,
                "threshold": 0.6,
                "params": {"ignore_case": True, "timeout_ms": 1000.0, "case_timeout_ms": 10000.0},
            }
        ],
    }


def test_thresholds_zero_and_one_and_weight_zero_are_legal() -> None:
    """The ends of the ranges are allowed, as long as some weight is above 0."""
    suite = make_suite(
        {"type": "operation-accuracy", "threshold": 0, "weight": 0},
        {"type": "content-quality", "threshold": 1},
    )
    assert [(s.threshold, s.weight) for s in suite.scorers] == [(0.0, 0.0), (1.0, 1.0)]


def test_misspelt_key_is_an_error_with_its_line_and_the_closest_key(tmp_path: Path) -> None:
    """'treshold' is not silently ignored: it is reported at its line with 'did you mean'."""
    path = write(
        tmp_path,
        """
        scorers:
          - type: operation-accuracy
            treshold: 0.9
        """,
    )
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:3: scorers[0].treshold: unknown key; did you mean")
    assert "'threshold'" in problem


def test_unknown_top_level_key_is_an_error(tmp_path: Path) -> None:
    """A misspelt top-level key is reported too."""
    path = write(tmp_path, "scorer:\n  - type: operation-accuracy\n")
    problems = problems_of(path)
    assert any(
        p.startswith(f"{path}:1: scorer: unknown key; did you mean 'scorers'?") for p in problems
    )
    assert any("scorers: required field is missing" in p for p in problems)


def test_unknown_type_lists_the_known_types_and_the_closest(tmp_path: Path) -> None:
    """An unknown type names the closest type and every known one, at its line."""
    path = write(tmp_path, "scorers:\n  - type: operation-acuracy\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:2: scorers[0].type: unknown scorer type")
    assert "Did you mean 'operation-accuracy'?" in problem
    assert "anti-hallucination, content-quality, operation-accuracy" in problem


def test_every_suite_error_is_reported_together_in_file_order(tmp_path: Path) -> None:
    """Typos, bad types, bad values and missing params come out in one error, by line."""
    path = write(
        tmp_path,
        """
        scorers:
          - type: operation-accuracy
            treshold: 0.9
          - type: content-qualty
          - type: anti-hallucination
            weight: -1
          - type: target-block-precision
            threshold: 1.5
          - type: response-time
        """,
    )
    problems = problems_of(path)
    assert [p.split(": ", 2)[:2] for p in problems] == [
        [f"{path}:3", "scorers[0].treshold"],
        [f"{path}:4", "scorers[1].type"],
        [f"{path}:6", "scorers[2].weight"],
        [f"{path}:8", "scorers[3].threshold"],
        [f"{path}:9", "scorers[4].params.max_acceptable_ms"],
    ]
    assert "got -1; expected greater than or equal to 0" in problems[2]
    assert "got 1.5; expected less than or equal to 1" in problems[3]
    assert "required field is missing" in problems[4]


def test_negative_threshold_is_an_error() -> None:
    """A threshold below 0 is outside [0, 1]."""
    with pytest.raises(SuiteError, match=r"scorers\[0\]\.threshold: got -0.1"):
        make_suite({"type": "operation-accuracy", "threshold": -0.1})


def test_all_weights_zero_is_an_error() -> None:
    """With every weight 0 no case could have a weighted score."""
    with pytest.raises(SuiteError, match="every weight is 0"):
        make_suite(
            {"type": "operation-accuracy", "weight": 0}, {"type": "content-quality", "weight": 0}
        )


def test_bad_parameter_is_reported_with_its_path_and_what_the_scorer_takes() -> None:
    """A parameter the scorer does not take names the scorer's parameters."""
    with pytest.raises(SuiteError) as raised:
        make_suite({"type": "content-quality", "params": {"ignore_cse": True}})
    [problem] = raised.value.problems
    assert problem.path == "scorers[0].params.ignore_cse"
    assert problem.message == (
        "unknown key; did you mean 'ignore_case'? content-quality takes: ignore_case, timeout_ms, "
        "case_timeout_ms"
    )


def test_parameter_of_a_scorer_without_params_is_reported() -> None:
    """A scorer that takes no params says so."""
    with pytest.raises(SuiteError, match="operation-accuracy takes no params"):
        make_suite({"type": "operation-accuracy", "params": {"strict": True}})


def test_same_type_twice_without_names_is_an_error() -> None:
    """Two entries of one type need names, since results are keyed by them."""
    with pytest.raises(SuiteError) as raised:
        make_suite({"type": "content-quality"}, {"type": "content-quality", "name": "cq-2"})
    [problem] = raised.value.problems
    assert problem.path == "scorers[0]"
    assert "type 'content-quality' appears 2 times (scorers[0], scorers[1])" in problem.message


def test_same_type_twice_with_distinct_names_is_keyed_by_name() -> None:
    """Named entries of one type resolve, keyed by their names."""
    suite = make_suite(
        {"type": "content-quality", "name": "strict-case"},
        {"type": "content-quality", "name": "any-case", "params": {"ignore_case": True}},
    )
    assert [e.key for e in suite.scorers] == ["strict-case", "any-case"]


def test_name_equal_to_another_entrys_type_is_an_error() -> None:
    """A name may not take the key of another entry (here, its type)."""
    with pytest.raises(SuiteError) as raised:
        make_suite(
            {"type": "operation-accuracy"},
            {"type": "content-quality", "name": "operation-accuracy"},
        )
    [problem] = raised.value.problems
    assert problem.path == "scorers[1].name"
    assert "key 'operation-accuracy' is used by scorers[0], scorers[1]" in problem.message


def test_two_equal_names_are_an_error() -> None:
    """Two entries with the same name clash."""
    with pytest.raises(SuiteError, match="key 'x' is used by scorers"):
        make_suite(
            {"type": "content-quality", "name": "x"}, {"type": "operation-accuracy", "name": "x"}
        )


@pytest.mark.parametrize("name", [" ", "\t\n"])
def test_a_blank_name_is_an_error(name: str) -> None:
    """A name of spaces would key the scorer's results by nothing visible in every report."""
    with pytest.raises(SuiteError) as raised:
        make_suite({"type": "content-quality", "name": name})
    [problem] = raised.value.problems
    assert (problem.path, problem.message) == (
        "scorers[0].name",
        f"got {json.dumps(name)}; expected a name that is not blank",
    )


def test_empty_scorer_list_is_an_error() -> None:
    """A suite needs at least one scorer."""
    with pytest.raises(SuiteError, match="at least one scorer"):
        suite_from_dict({"scorers": []})


def test_suite_that_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    """A bare string is not a suite."""
    path = write(tmp_path, "just text\n")
    assert problems_of(path) == [f"{path}:1: a suite is a mapping with a 'scorers' list of scorers"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("- a\n", "suite.yaml"),
        ("# scorers\n- scorers: []\n- scorers: []\n", "suite.yaml"),
        ('[{"scorers": []}]', "suite.json"),
    ],
)
def test_a_suite_file_that_is_a_list_says_it_found_a_list(
    tmp_path: Path, text: str, name: str
) -> None:
    """A top-level list is named a list, not its first item's type or a count of documents."""
    [problem] = problems_of(write(tmp_path, text, name))
    assert "holds one mapping with a 'scorers' list; found a list (" in problem


def test_empty_suite_file_is_an_error(tmp_path: Path) -> None:
    """An empty file says it found nothing."""
    path = write(tmp_path, "# nothing yet\n")
    assert "found nothing" in problems_of(path)[0]


def test_invalid_yaml_is_reported_with_its_line(tmp_path: Path) -> None:
    """A YAML syntax error is a suite error at its line."""
    path = write(tmp_path, "scorers:\n  - type: [unclosed\n")
    [problem] = problems_of(path)
    assert problem.startswith(f"{path}:3: invalid YAML")


def test_missing_suite_file_is_an_input_error(tmp_path: Path) -> None:
    """A suite file that does not exist is not a suite error but an unreadable input."""
    with pytest.raises(InputFileError, match="no such file"):
        load_suite(tmp_path / "missing.yaml")


def test_suite_yaml_cannot_construct_python_objects(tmp_path: Path) -> None:
    """YAML tags that would build Python objects are refused (safe loading)."""
    path = write(tmp_path, "scorers: !!python/object/apply:os.system ['echo hacked']\n")
    assert "the tag !!python/object/apply:os.system is not supported" in problems_of(path)[0]


def test_example_suite_loads() -> None:
    """The shipped example suite is valid and uses anti-hallucination and response-time."""
    suite = load_suite(EXAMPLE_SUITE)
    assert isinstance(suite, Suite)
    assert {"anti-hallucination", "response-time"} <= {e.key for e in suite.scorers}


@pytest.mark.parametrize("scorer_type", ["content-quality", "operation-result"])
def test_a_timeout_past_the_maximum_is_a_suite_error_saying_why(
    tmp_path: Path, scorer_type: str
) -> None:
    """``timeout_ms: 1e12`` would switch the regex bound off; it is refused before any case."""
    path = write(
        tmp_path,
        f"""
        scorers:
          - type: {scorer_type}
            params: {{timeout_ms: 1e12}}
        """,
    )
    [problem] = problems_of(path)
    assert problem.startswith(
        f"{path}:3: scorers[0].params.timeout_ms: got 1000000000000.0; at most 60000 ms "
        "(one minute) per pattern and page; the bound keeps a catastrophic pattern from hanging "
        "the run, so it cannot be switched off"
    )


def test_the_maximum_timeout_itself_is_accepted(tmp_path: Path) -> None:
    """The bound is inclusive: one minute is allowed."""
    path = write(tmp_path, "scorers: [{type: content-quality, params: {timeout_ms: 60000}}]\n")
    assert load_suite(path).scorers[0].params["timeout_ms"] == 60000


def test_a_suite_with_an_alias_bomb_is_a_located_suite_error(tmp_path: Path) -> None:
    """The suite loader gets the YAML budget too: one problem at the alias, no gigabytes."""
    aliases = "\n".join(f"x{i}: &x{i} [{','.join([f'*x{i - 1}'] * 9)}]" for i in range(1, 9))
    path = write(tmp_path, f"x0: &x0 [a,a,a,a,a,a,a,a,a]\n{aliases}\nscorers: []\n")
    [problem] = problems_of(path)
    assert "too many alias expansions" in problem


def test_a_type_repeated_1000_times_gives_short_problems() -> None:
    """Each problem names the first few entries and counts the rest: linear, not quadratic."""
    with pytest.raises(SuiteError) as raised:
        make_suite(*[{"type": "content-quality"}] * 1000)
    problems = raised.value.problems
    assert len(problems) == 1000
    assert max(len(problem.message) for problem in problems) < 300
    assert "(scorers[0], scorers[1], scorers[2] and 997 more)" in problems[0].message


def test_same_type_twice_says_why_a_name_is_needed_and_offers_a_free_one() -> None:
    """Each unnamed entry gets a name no key uses yet, and the reason there is no default."""
    with pytest.raises(SuiteError) as raised:
        make_suite(
            {"type": "content-quality", "name": "content-quality-2"},
            {"type": "content-quality"},
            {"type": "content-quality"},
        )
    first, second = (problem.message for problem in raised.value.problems)
    assert "(content-quality-3 is free)" in first
    assert "(content-quality-4 is free)" in second
    assert "a default from the position would match another scorer" in first


def _refused_gzipped_or_on_stdin(
    text: str, path: Path, given_as: str, monkeypatch: pytest.MonkeyPatch
) -> pytest.ExceptionInfo[SuiteError]:
    """``load_suite``'s refusal of ``text`` given gzipped at ``path``, or on standard input."""
    path.write_bytes(gzip.compress(text.encode()))
    if given_as == "stdin":
        monkeypatch.setattr("sys.stdin", io.StringIO(text))
    with pytest.raises(SuiteError) as raised:
        load_suite("-" if given_as == "stdin" else path)
    return raised


@pytest.mark.parametrize("given_as", ["gzip", "stdin"])
def test_a_json_suite_read_gzipped_or_from_stdin_names_its_key_s_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given_as: str
) -> None:
    """A .gz suite or one on standard input: each problem at its key's line, as a plain file's;
    before, every one was at line 1 (the file could not be read again for its lines)."""
    suite = {"scorers": [{"type": "operation-accuracy"}, {"type": "nope", "weight": -1}]}
    text = json.dumps(suite, indent=2)
    raised = _refused_gzipped_or_on_stdin(text, tmp_path / "suite.json.gz", given_as, monkeypatch)
    lines = text.splitlines()
    found = {p.path: lines[(p.location.line or 0) - 1].strip() for p in raised.value.problems}
    assert found == {"scorers[1].type": '"type": "nope",', "scorers[1].weight": '"weight": -1'}


@pytest.mark.parametrize("given_as", ["gzip", "stdin"])
def test_a_list_suite_read_gzipped_or_from_stdin_says_it_found_a_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given_as: str
) -> None:
    """A list in a .gz suite or on standard input is named a list, as in a plain file; before,
    the file was read again by its name (gzipped bytes, or no file ``-``), so it was not."""
    text = "- scorers: []\n- scorers: []\n"
    raised = _refused_gzipped_or_on_stdin(text, tmp_path / "suite.yaml.gz", given_as, monkeypatch)
    [problem] = raised.value.problems
    assert "found a list (2 items)" in problem.message


def test_a_suite_from_stdin_is_named_as_its_problems_name_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Standard input has one name, in the summary as in each problem; before, the summary
    said ``-:`` and the problems ``<stdin>:``."""
    monkeypatch.setattr("sys.stdin", io.StringIO("scorers:\n  - type: nope\n"))
    with pytest.raises(SuiteError) as raised:
        load_suite("-")
    [problem] = raised.value.problems
    summary = str(raised.value).split("\n", 1)[0]
    assert summary.split(": ", 1)[0] == problem.location.file


def test_a_file_name_with_a_line_break_is_shown_escaped_in_every_line(tmp_path: Path) -> None:
    r"""A suite named ``a\nb.yaml`` is ``a\nb.yaml`` in the summary and in each problem, one
    line each, the problems still on lines of their own; before, the raw line break cut the
    summary to ``a`` and split each problem's line in two."""
    path = write(tmp_path, "scorers:\n  - type: nope\n", "a\nb.yaml")
    shown = str(path).replace("\n", "\\n")
    with pytest.raises(SuiteError) as raised:
        load_suite(path)
    summary, *problems = str(raised.value).split("\n")
    assert summary == f"{shown}: 1 problem in the suite"
    assert [line.split(": ", 1)[0] for line in problems] == [f"  {shown}:2"]
    with pytest.raises(InputFileError, match=r"^[^\n]*a\\nc\.yaml: no such file"):
        load_suite(tmp_path / "a\nc.yaml")


def test_a_value_the_reader_refuses_is_listed_with_the_suites_other_problems(
    tmp_path: Path,
) -> None:
    """A .nan no longer hides the typos after it until the next run; none is said twice."""
    path = write(
        tmp_path,
        """
        scorers:
          - type: response-time
            threshold: .nan
            params: !!binary aGVsbG8=
          - type: content-quality
            treshold: 0.5
        """,
    )
    with pytest.raises(SuiteError, match=r"suite.yaml: 3 problems in the suite") as raised:
        load_suite(path)
    assert [(p.location.line, p.path) for p in raised.value.problems] == [
        (3, "scorers[0].threshold"),
        (4, "scorers[0].params"),  # not again as params missing max_acceptable_ms
        (6, "scorers[1].treshold"),
    ]


@pytest.mark.parametrize("refused", [".nan", "!!binary aGVsbG8="])
def test_a_one_item_list_with_a_refused_value_is_said_to_be_a_list_in_the_same_run(
    tmp_path: Path, refused: str
) -> None:
    """A list holding a .nan is named a list with the .nan, not only once the .nan is fixed."""
    path = write(tmp_path, f"- scorers:\n    - type: response-time\n      threshold: {refused}\n")
    with pytest.raises(SuiteError, match=r"suite.yaml: not a suite") as raised:
        load_suite(path)
    found = [(p.location.line, p.path, p.message) for p in raised.value.problems]
    assert [(line, path) for line, path, _ in found] == [(1, ""), (3, "scorers[0].threshold")]
    assert found[0][2].endswith("holds one mapping with a 'scorers' list; found a list (1 item)")


def test_a_json_suites_own_nan_is_refused_as_nan_not_read_as_a_missing_value(
    tmp_path: Path,
) -> None:
    """A suite is written by a person, not a dataset with missing cells: NaN is said as NaN."""
    path = tmp_path / "suite.json"
    path.write_text('{"name": "s", "scorers": NaN}\n')
    with pytest.raises(SuiteError) as raised:
        load_suite(path)
    [problem] = raised.value.problems
    assert (problem.location.line, problem.path) == (1, "scorers")
    assert "NaN and infinite numbers are not valid JSON" in problem.message


def test_a_syntax_error_is_said_alone_as_the_shape_of_the_file_is_unknown(tmp_path: Path) -> None:
    """A file that cannot be parsed through says so, and guesses nothing of its shape."""
    [problem] = problems_of(write(tmp_path, "- scorers: [\n"))
    assert "invalid YAML" in problem


def test_is_suite_file_tells_a_suite_from_cases_and_other_files(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text("scorers:\n  - type: operation-accuracy\n", encoding="utf-8")
    cases = tmp_path / "cases.yaml"
    cases.write_text("- id: a\n  input: x\n  expected: y\n", encoding="utf-8")
    named_as_text = tmp_path / "suite.txt"
    named_as_text.write_text(suite.read_text(encoding="utf-8"), encoding="utf-8")
    assert is_suite_file(suite)
    assert is_suite_file(str(suite))
    assert not is_suite_file(cases)  # a list of cases is no suite
    assert not is_suite_file(named_as_text)  # neither YAML nor JSON by its name
    assert not is_suite_file(tmp_path / "missing.yaml")
