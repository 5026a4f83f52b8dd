"""Write Google ADK's saved sessions of recorded runs, as ``adk run --save_session`` writes them.

Run by hand from the repository root (never by the test suite), the cassettes laid out as
``otel_frameworks_traces.py`` says, in a virtual environment of its own (made on 4 December
2026)::

    python -m venv /tmp/adk
    /tmp/adk/bin/pip install google-adk==2.13.0 vcrpy pyyaml
    /tmp/adk/bin/python tests/conformance/adk_sessions.py CASSETTES

OpenInference's Google ADK instrumentor recorded, for its own tests, the Gemini API's replies to
ADK agents (VCR cassettes). Each run is made again here as ``otel_frameworks_traces.py`` makes it
(the agents and tools the recording's test defines, an ``InMemoryRunner``), under vcrpy replaying
that cassette (nothing leaves the machine), untraced; then its session is written as ADK's CLI
saves one (``google/adk/cli/cli.py``: ``public_session(session).model_dump_json(indent=2,
exclude_none=True, by_alias=True)``, camelCase keys) to ``files/adk/adk_2.13_<run>.session.json``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

OUT = Path(__file__).parent / "files" / "adk"
RUNS = ("weather", "sub_agents")
"""The runs of ``otel_frameworks_traces.RUNS`` whose sessions are kept."""


def main(cassettes: Path) -> None:
    """Replay each of :data:`RUNS` and write its saved session."""
    import vcr  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from google.adk.events._internal_metadata import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
        public_session,
    )

    sys.path.insert(0, str(Path(__file__).parent))
    from otel_frameworks_traces import RUNS as RECORDED  # type: ignore[import-not-found]

    os.environ["GOOGLE_API_KEY"] = "xyz"  # never sent: vcrpy answers every request
    replay = vcr.VCR(serializer="yaml", record_mode="none", match_on=["any_case_method", "uri"])
    replay.register_matcher(
        "any_case_method", lambda one, other: one.method.upper() == other.method.upper()
    )
    for name in RUNS:
        _, cassette, run = RECORDED[name]
        with replay.use_cassette(str(cassettes / cassette)):
            session = run(cassettes / cassette)
        text = public_session(session).model_dump_json(indent=2, exclude_none=True, by_alias=True)
        path = OUT / f"adk_2.13_{name}.session.json"
        path.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(OUT.parent)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
