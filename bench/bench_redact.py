"""Redaction benchmark: ``kp redact``'s speed, recall on public test data, the corpora's counts.

    python bench/bench_redact.py              # everything (a few minutes)
    python bench/bench_redact.py --runs 1     # one timed run of each input
    python bench/bench_redact.py --recall     # only what is found (seconds)
    python bench/bench_redact.py --rules      # only each rule's time on long texts (a minute)
    python bench/bench_redact.py --strings 20 # only the corpus's redacted strings, 20 of a type

Prints figures, asserts nothing:

- ``kp redact`` on 20,000 generated traces (``bench/generate_traces.py``), a whole process as a
  user runs it (start-up included): traces/s by the wall clock and by CPU time (user + sys;
  the wall clock of a shared machine counts other processes' turns). Once on the clean traces,
  once with a secret and an e-mail planted in every tenth trace's tool input;
- secrets recall on gitleaks' own true positives (``tests/redact/data/gitleaks_tps.jsonl``), in
  their context, bare (a secret with no name or key around it: only formats with a prefix
  can be told from a hash) and ending a sentence; on our own examples
  (``secret_examples.jsonl``), alone and planted in every free-text field of a trace; PII recall
  on presidio's recognizer cases, per entity, and what is not looked for (names, street
  addresses: counted, expected 0); the false-positive corpus (``ordinary_strings.txt``);
- the same for detect-secrets' plugins used as a library, when it is installed (``pip install
  detect-secrets``): recall, time per line, how many ordinary strings it flags, and its speed
  on every string of 1,000 generated traces beside ours;
- what is redacted on the two corpora (``corpora/``), by type and rule, at aggregated and private;
- what ``aggregated`` redacts in every distinct string of ``tests/conformance/files``: how many
  strings hold each type, and samples of each to read for false positives;
- each rule's time on long real texts (from ``tests/conformance/files`` and ``corpora/``): a
  20 KB traceback, a 20 KB JSON tool output, a 100 KB file dump, a 100 KB single line; each rule
  run whether or not its keywords are in the text (a traceback may say "coherent": the rule of
  ``cohere`` runs on it), the slowest by the median of ``--runs``; and ``clean_text`` on each.
"""

from __future__ import annotations

import argparse
import collections
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from knowledgepulse.redact import clean_text, redact_document
from knowledgepulse.redact.detectors import default_rules

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "redact" / "data"
KP = [sys.executable, "-m", "knowledgepulse.cli.main"]
# Personal data no rule looks for (docs/redaction.md says so): counted to show the gap.
NOT_LOOKED_FOR = {
    "given name": [
        "Please contact olusegun about the refund.",
        "Ask priya whether the booking is confirmed.",
        "Forward it to Mateo before Friday.",
        "The customer, Ingrid, wants a window seat.",
    ],
    "full name": [
        "Booked for Olusegun Adebayo, seat 14C.",
        "Passenger: Chen Wei-Ling",
    ],
    "street address": [
        "Ship it to 221B Baker Street, London.",
        "Deliver to 1600 Pennsylvania Avenue NW.",
        "Her address is Calle de Alcalá 42, 3º izq.",
    ],
    "date of birth": ["date of birth 14 March 1987"],
    "passport number": ["passport no. X1234567"],
}


def lines(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as source:
        return [json.loads(line) for line in source]


def ordinary() -> list[str]:
    """The false-positive corpus: strings none of which may be redacted."""
    text = (DATA / "ordinary_strings.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def run_kp(path: Path, runs: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds of ``kp redact PATH``."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(
                [*KP, "redact", str(path), "-o", f"{scratch}/out.jsonl", "--report",
                 f"{scratch}/report.json"],
                check=True,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def generate(count: int) -> list[str]:
    """``count`` generated traces, one JSON line each."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "generate_traces.py"), str(count)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()


def strings_of(value: Any) -> list[str]:
    """Every string of a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in strings_of(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings_of(item)]
    return []


def generated_trace() -> str:
    """One generated trace (``bench/generate_traces.py``), as a JSON line."""
    return generate(1)[0]


def speed(runs: int, generated: list[str]) -> None:
    count = len(generated)
    samples = lines("gitleaks_tps.jsonl")
    planted = []
    for number, line in enumerate(generated):
        document = json.loads(line)
        if number % 10 == 0:
            sample = samples[number // 10 % len(samples)]["sample"]
            document["steps"][0]["content"] += f" mail ops{number}@example.com"
            document["steps"][0]["input"] = {"config": {"env": sample}}
        planted.append(json.dumps(document))
    with tempfile.TemporaryDirectory() as scratch:
        for name, text in (("clean", generated), ("planted", planted)):
            path = Path(scratch) / f"{name}.jsonl"
            path.write_text("\n".join(text) + "\n")
            wall, cpu = run_kp(path, runs)
            print(
                f"kp redact, {count:,} {name} traces: {count / wall:,.0f} traces/s wall "
                f"({wall:.2f} s), {count / cpu:,.0f} traces/s of CPU ({cpu:.2f} s)"
            )


def our_recall() -> None:
    samples = lines("gitleaks_tps.jsonl")
    for row in samples:  # the rules' patterns compile on first use: time the second pass
        clean_text(row["sample"], "private")
    start = time.perf_counter()
    caught = sum(row["secret"] not in clean_text(row["sample"], "private").text for row in samples)
    elapsed = time.perf_counter() - start
    bare = {row["secret"]: row["rule"] for row in samples}
    caught_bare = sum(
        secret not in clean_text(f"the value is {secret} now", "private").text for secret in bare
    )
    rules = len({row["rule"] for row in samples})
    print(
        f"secrets recall, gitleaks true positives ({len(samples)} samples, {rules} rules): "
        f"{caught / len(samples):.3f} in context, {caught_bare / len(bare):.3f} bare "
        f"({len(bare)} secrets); {elapsed / len(samples) * 1e6:.0f} us a sample"
    )
    found: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    for row in lines("presidio_cases.jsonl"):
        cleaned = clean_text(row["text"]).text
        for part in row["expected"]:
            total[row["entity"]] += 1
            found[row["entity"]] += part not in cleaned
    per = ", ".join(f"{kind} {found[kind]}/{total[kind]}" for kind in total)
    print(f"PII recall, presidio cases: {sum(found.values()) / sum(total.values()):.3f} ({per})")
    not_looked_for = ", ".join(
        f"{kind} {sum(clean_text(text).text != text for text in texts)}/{len(texts)}"
        for kind, texts in NOT_LOOKED_FOR.items()
    )
    print(f"personal data no rule looks for, found: {not_looked_for}")
    strings = ordinary()
    flagged = [text for text in strings if clean_text(text, "aggregated").text != text]
    print(f"false-positive corpus ({len(strings)} ordinary strings) redacted: {len(flagged)}")
    for text in flagged:
        print(f"  redacted: {text!r}")


def planted() -> None:
    rows = lines("gitleaks_tps.jsonl")
    secrets = sorted({row["secret"] for row in rows})
    for sentence in ("Use {}.", "the key ({}), then"):
        caught = sum(
            secret not in clean_text(sentence.format(secret), "private").text for secret in secrets
        )
        print(f"gitleaks secrets in {sentence!r}: {caught}/{len(secrets)}")
    examples = lines("secret_examples.jsonl")
    caught = sum(row["secret"] not in clean_text(row["sample"], "private").text for row in examples)
    print(f"our examples (secret_examples.jsonl): {caught}/{len(examples)}")
    places = leaked = 0
    trace = generated_trace()
    for row in [*{row["rule"]: row for row in reversed(rows)}.values(), *examples]:
        document = json.loads(trace)
        text = f"Noted: {row['sample']}."
        document["task"]["objective"] = text
        document["outcome"]["result_summary"] = text
        for step in document["steps"]:
            step["content"] = text
            if step.get("input") is not None:
                step["input"] = {"query": text, "args": [{"env": text}]}
        document["knowledge_graph_delta"] = {
            "entities": [{"name": text, "type": text}],
            "relationships": [{"fact": text, "valid_from": text}],
        }
        redacted, _ = redact_document(document, "private")
        # The walker keeps the shape and the order: the strings pair up.
        for before, after in zip(strings_of(document), strings_of(redacted), strict=True):
            places += before == text
            leaked += before == text and row["secret"] in after
    print(
        f"planted traces, an example of each rule in every free-text field: "
        f"{leaked} of {places} places leaked"
    )


def detect_secrets_recall(generated: list[str]) -> None:
    try:
        # Optional: only to compare with (not a dependency of knowledgepulse).
        from detect_secrets.core.scan import scan_line  # noqa: PLC0415
        from detect_secrets.settings import default_settings  # noqa: PLC0415
    except ImportError:
        print("detect-secrets: not installed (pip install detect-secrets), skipped")
        return
    samples = lines("gitleaks_tps.jsonl")
    with default_settings():
        for row in samples[:50]:  # warm up, as for ours
            list(scan_line(row["sample"]))
        start = time.perf_counter()
        caught = 0
        scanned = 0
        for row in samples:
            found = []
            for line in row["sample"].splitlines():
                found += [item.secret_value or "" for item in scan_line(line)]
                scanned += 1
            caught += any(
                (value and value in row["secret"]) or row["secret"] in value for value in found
            )
        elapsed = time.perf_counter() - start
        bare = {row["secret"] for row in samples}
        caught_bare = sum(any(scan_line(f"the value is {secret} now")) for secret in bare)
        flagged = sum(any(scan_line(text)) for text in ordinary())
        documents = [json.loads(line) for line in generated[:1000]]
        start = time.process_time()
        for document in documents:
            for text in strings_of(document):
                for line in text.splitlines():
                    list(scan_line(line))
        theirs = len(documents) / (time.process_time() - start)
    start = time.process_time()
    for document in documents:
        redact_document(document)
    ours = len(documents) / (time.process_time() - start)
    print(
        f"every string of 1,000 generated traces, CPU time: detect-secrets {theirs:,.0f} "
        f"traces/s, knowledgepulse.redact {ours:,.0f} traces/s"
    )
    print(
        f"detect-secrets as a library: recall {caught / len(samples):.3f} in context, "
        f"{caught_bare / len(bare):.3f} bare; {elapsed / scanned * 1e6:.0f} us a line; "
        f"ordinary strings flagged: {flagged}/{len(ordinary())}"
    )


def corpora() -> None:
    for level in ("aggregated", "private"):
        kinds: collections.Counter[str] = collections.Counter()
        rules: collections.Counter[str] = collections.Counter()
        traces = redacted = 0
        for path in sorted((ROOT / "corpora").glob("*.jsonl")):
            with path.open(encoding="utf-8") as source:
                for line in source:
                    _, findings = redact_document(json.loads(line), level)
                    traces += 1
                    redacted += bool(findings)
                    for finding in findings:
                        kinds[finding.type] += finding.count
                        rules[finding.rule] += finding.count
        print(
            f"corpora at {level}: {traces} traces, {redacted} redacted; by type "
            f"{dict(kinds.most_common()) or 'none'}; by rule {dict(rules.most_common()) or 'none'}"
        )


CONFORMANCE_FILES = sorted((ROOT / "tests" / "conformance" / "files").glob("*/*"))


def real_texts(paths: list[Path]) -> tuple[list[str], list[str]]:
    """Every string of the JSON and JSON Lines files in ``paths``, and the JSON Lines' lines."""
    texts: list[str] = []
    records: list[str] = []
    for path in paths:
        if path.suffix == ".json" and not path.name.endswith(".facts.json"):
            texts += strings_of(json.loads(path.read_text("utf-8")))
        elif path.suffix == ".jsonl":
            records += [line for line in path.read_text("utf-8").splitlines() if line.strip()]
    for line in records:
        texts += strings_of(json.loads(line))
    return texts, records


def conformance_strings(shown: int) -> None:
    """What ``aggregated`` redacts in every distinct string of the conformance corpus.

    Read the samples for false positives: a real file's ids, times and code, not made-up text.
    """
    texts = sorted(set(real_texts(CONFORMANCE_FILES)[0]))
    kinds: collections.Counter[str] = collections.Counter()
    samples: dict[str, list[str]] = collections.defaultdict(list)
    for text in texts:
        cleaned = clean_text(text, "aggregated")
        kinds.update(cleaned.redactions.keys())
        for kind in cleaned.redactions:
            at = cleaned.text.index(f"[REDACTED:{kind}]")
            samples[kind].append(cleaned.text[max(0, at - 40) : at + 50])
    redacted = sum(1 for text in texts if clean_text(text, "aggregated").text != text)
    print(f"distinct strings of tests/conformance/files: {len(texts):,}, {redacted:,} redacted")
    print(f"  strings with each type: {dict(kinds.most_common())}")
    for kind, found in sorted(samples.items()):
        for sample in found[:: max(1, len(found) // max(1, shown))][:shown]:
            print(f"  {kind}: {sample!r}")


def long_texts() -> dict[str, str]:
    """Long texts of real traces, as a user's records hold them (see the docstring)."""

    def joined(chosen: list[str], size: int, between: str = "\n") -> str:
        return between.join(sorted(chosen, key=len, reverse=True))[:size]

    texts, records = real_texts([*CONFORMANCE_FILES, *sorted((ROOT / "corpora").glob("*"))])
    return {
        "traceback, 20 KB": joined([t for t in texts if "Traceback (most recent" in t], 20_000),
        "JSON tool output, 20 KB": joined(
            [t for t in texts if t[:1] in "{[" and "\n" in t], 20_000
        ),
        "file dump, 100 KB": joined([t for t in texts if t.count("\n") > 20], 100_000),
        "single line, 100 KB": joined(records, 100_000, " "),
    }


def rule_times(runs: int, shown: int = 12) -> None:
    texts = long_texts()
    rules = default_rules().rules
    for rule in rules:  # compiled on first use: not timed
        list(rule.spans("warm up"))
    worst: dict[str, tuple[float, str]] = {}
    for label, text in texts.items():
        for rule in rules:
            times = []
            for _ in range(runs):
                start = time.process_time()
                list(rule.spans(text))
                times.append(time.process_time() - start)
            median = statistics.median(times)
            if median > worst.get(rule.name, (-1.0, ""))[0]:
                worst[rule.name] = (median, label)
    slowest = sorted(worst.items(), key=lambda item: item[1][0], reverse=True)[:shown]
    print(f"slowest rules ({len(rules)} run on each long text, CPU s, median of {runs}):")
    for name, (seconds, label) in slowest:
        print(f"  {name:40} {seconds:8.3f} s  ({label})")
    for label, text in texts.items():
        times = []
        for _ in range(runs):
            start = time.process_time()
            clean_text(text)
            times.append(time.process_time() - start)
        print(f"clean_text, {label} ({len(text):,} chars): {statistics.median(times):.3f} s of CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each input")
    parser.add_argument("--traces", type=int, default=20_000, help="generated traces")
    parser.add_argument("--recall", action="store_true", help="only what is found, not speed")
    parser.add_argument("--rules", action="store_true", help="only each rule's time on long texts")
    parser.add_argument(
        "--strings", type=int, metavar="N", help="only the conformance corpus's redacted strings"
    )
    args = parser.parse_args()
    if args.rules:
        rule_times(args.runs)
        return
    if args.strings is not None:
        conformance_strings(args.strings)
        return
    our_recall()
    planted()
    if args.recall:
        return
    generated = generate(args.traces)
    speed(args.runs, generated)
    detect_secrets_recall(generated)
    corpora()
    conformance_strings(shown=3)
    rule_times(args.runs)


if __name__ == "__main__":
    main()
