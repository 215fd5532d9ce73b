"""One reading of event types (SPEC §3.1, §4: comparisons are case-insensitive): every spelling of a known
type is read alike by the diagnosis, the store's normalization, the execution outcome, the OTLP mapping
and the suite summary, all through `service.diagnosis.events.event_type_of`."""

from typing import Any

import orjson
import pytest

from service.diagnosis import KNOWN_TYPES, InputError, diagnose, event_type_of, normalize_events
from service.diagnosis.facts import gather
from service.judge import decode_json_body, to_run_events
from service.outcome import ExecutionStatus, RunOutcome, classify_execution, summarize_suite

SPELLINGS = ("error_event", "ERROR_EVENT", "Error_Event", "eRRoR_eVeNT")
STAGED = {"stage": "setup", "reason": "toolchain_missing", "error": "dotnet: command not found"}
NOV_20_NANOS = 1_763_629_231 * 10**9


def _read_by_every_layer(events: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What each layer makes of a run: the diagnosis's counts, the store's types, the outcome."""
    diagnosis = diagnose(events)
    outcome = classify_execution(None, events, diagnosis.trust_score, readiness=diagnosis.readiness_level)
    return (
        diagnosis.event_counts,
        diagnosis.evidence_summary["errors"],
        [event.type for event in normalize_events(events)],
        (outcome.status, outcome.stage, outcome.reason_code, outcome.message),
    )


EXPECTED = (
    {"error_event": 1},
    1,
    ["error_event"],
    (ExecutionStatus.EXECUTION_ERROR, "setup", "toolchain_missing", "dotnet: command not found"),
)


@pytest.mark.parametrize("key", ["event", "type"])
@pytest.mark.parametrize("spelling", SPELLINGS)
def test_run_events_every_spelling_is_a_staged_error_everywhere(spelling: str, key: str) -> None:
    assert _read_by_every_layer([{key: spelling, **STAGED}]) == EXPECTED


def _otlp_request(name: str) -> bytes:
    attributes = [{"key": "session.id", "value": {"stringValue": "s-1"}}] + [
        {"key": key, "value": {"stringValue": value}} for key, value in STAGED.items()
    ]
    record = {"timeUnixNano": str(NOV_20_NANOS), "eventName": name, "attributes": attributes}
    return orjson.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]})


@pytest.mark.parametrize("name", [*SPELLINGS, *(f"claude_code.{spelling}" for spelling in SPELLINGS)])
def test_otlp_records_every_spelling_maps_to_the_same_run_event(name: str) -> None:
    events = to_run_events(decode_json_body(_otlp_request(name)).records)
    assert [event["event"] for event in events] == ["error_event"]
    assert _read_by_every_layer(events) == EXPECTED


def test_suite_summary_counts_every_spelling_alike() -> None:
    records = []
    for number, spelling in enumerate(SPELLINGS):
        events = [{"event": "tool_call", "tool": "t"}, {"event": spelling, **STAGED}]
        diagnosis = diagnose(events)
        outcome = classify_execution(None, events, diagnosis.trust_score, readiness=diagnosis.readiness_level)
        records.append(
            RunOutcome(f"r{number}", "s", f"t-{number}", None, outcome.status, outcome.score, outcome.stage,
                       outcome.reason_code)
        )  # fmt: skip
    summary = summarize_suite("s", records)
    assert (summary.execution_errors, summary.passed, summary.quality_failures) == (len(SPELLINGS), 0, 0)
    assert summary.by_stage == {"setup": len(SPELLINGS)}
    assert summary.by_reason == {"toolchain_missing": len(SPELLINGS)}


def _spellings(name: str) -> list[str]:
    return sorted({name, name.upper(), name.title(), name.swapcase(), name[0].upper() + name[1:]})


@pytest.mark.parametrize("kind", KNOWN_TYPES)
def test_every_known_type_in_any_case_is_counted_under_its_canonical_name(kind: str) -> None:
    events = [{"event": spelling} for spelling in _spellings(kind)] + [{"type": kind.upper()}]
    assert diagnose(events).event_counts == {kind: len(events)}
    assert {event.type for event in normalize_events(events)} == {kind}


# Events whose type the fast path of `facts.gather` reads inline or hands to event_type_of.
TYPE_CASES: list[dict[str, Any]] = [
    {},
    {"event": None},
    {"type": None},
    {"event": None, "type": None},
    {"event": None, "type": "TOOL_CALL"},
    {"event": "tool_call", "type": "memory_event"},
    {"event": "Tool_Call", "type": "memory_event"},
    {"type": "context_event"},
    {"type": "Context_Event"},
    {"event": "custom_Thing"},
    {"event": "CUSTOM_THING"},
    {"event": ""},
    {"event": "process_output"},
    {"event": "PROCESS_OUTPUT"},
    *({"event": spelling} for kind in KNOWN_TYPES for spelling in _spellings(kind)),
]


def test_the_diagnosis_fast_path_reads_types_as_event_type_of() -> None:
    facts = gather(TYPE_CASES)
    assert facts.types == [event_type_of(event, position) for position, event in enumerate(TYPE_CASES)]


@pytest.mark.parametrize("event", [{"event": 3}, {"type": ["tool_call"]}, {"event": None, "type": {}}])
def test_a_type_that_is_not_a_string_is_refused_alike(event: dict[str, Any]) -> None:
    events = [{"event": "tool_call"}, event]
    with pytest.raises(InputError) as by_event_type_of:
        event_type_of(event, 1)
    for read in (diagnose, normalize_events):
        with pytest.raises(InputError) as raised:
            read(events)
        assert raised.value.field == by_event_type_of.value.field
    with pytest.raises(InputError) as raised:
        classify_execution(None, events, 100, readiness="ready_for_runtime")
    assert raised.value.field == by_event_type_of.value.field
