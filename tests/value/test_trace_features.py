"""TraceFeatures.of counts in one pass what the formulas read, for every shape of trace."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from knowledgepulse.trace.models import STEP_TYPES, ReasoningTrace
from knowledgepulse.value.dimensions import TraceFeatures
from tests.builders import step, trace_json

step_specs = st.lists(
    st.tuples(st.sampled_from(STEP_TYPES), st.none() | st.sampled_from(["", "search", "sql"])),
    min_size=1,
    max_size=12,
)
sources = st.one_of(
    st.none(),
    st.just("not a mapping"),
    st.fixed_dictionaries(
        {},
        optional={
            "domain_source": st.sampled_from(["argument", "metadata", "default", "other"]),
            "confidence_source": st.sampled_from(["argument", "metadata", "default", 3]),
        },
    ),
)


@given(specs=step_specs, source=sources, success=st.booleans())
def test_features_are_the_counts_the_spec_defines(
    specs: list[tuple[str, str | None]], source: Any, success: bool
) -> None:
    """Each count is its definition over the steps; the origins come from metadata.source."""
    data = trace_json(
        success=success,
        step_list=[step(n, kind, tool=tool) for n, (kind, tool) in enumerate(specs)],
    )
    if source is not None:
        data["metadata"]["source"] = source
    trace = ReasoningTrace.model_validate(data)
    tools = [tool for _, tool in specs if tool is not None]
    origins = source if isinstance(source, dict) else {}
    known = ("argument", "metadata", "default")

    assert TraceFeatures.of(trace) == TraceFeatures(
        step_count=len(specs),
        unique_step_types=len({kind for kind, _ in specs}),
        error_recoveries=sum(kind == "error_recovery" for kind, _ in specs),
        unique_tools=len(set(tools)),
        uses_tools=bool(tools),
        single_thought=[kind for kind, _ in specs] == ["thought"],
        success=success,
        confidence=1.0,
        domain_source=d if (d := origins.get("domain_source")) in known else "trace",
        confidence_source=c if (c := origins.get("confidence_source")) in known else "trace",
    )
