"""A session's OTLP records as run events for the diagnosis engine (SPEC §3.2 mapping)."""

from collections import Counter

import orjson
import pytest

from service.diagnosis import diagnose
from service.judge import parse_tool_parameters, to_run_events, tool_call_args
from tests.judge_support import NANOS_PER_SECOND, fixture_session, record


def test_fixture_session_maps_to_the_documented_events() -> None:
    events = to_run_events(fixture_session("sess-a1"))
    assert Counter(event["event"] for event in events) == {
        "tool_call": 10,
        "tool_output": 10,
        "token_usage": 7,
        "user_prompt": 3,
    }
    prompt, call, output = events[:3]
    assert prompt["event"] == "user_prompt" and prompt["prompt_length"] == 97
    # SPEC §3.2 changed on 2026-11-23: the fixture's tool_results carry no tool_parameters, so each
    # call's args is {"call": <the record's position in the session>} (was {}: every Read matched).
    assert call == {
        "event": "tool_call",
        "event_id": call["event_id"],
        "timestamp": 1763629231 * NANOS_PER_SECOND,
        "tool": "Read",
        "args": {"call": 1},
    }
    # SPEC §3.2 changed on 2026-11-25: Claude Code's durations, token split, cache, cost and model are kept.
    assert output == {
        "event": "tool_output",
        "event_id": output["event_id"],
        "timestamp": 1763629231 * NANOS_PER_SECOND,
        "tool": "Read",
        "status": "ok",
        "duration_ms": 247,
    }
    assert events[7] == {
        "event": "token_usage",
        "event_id": events[7]["event_id"],
        "timestamp": 1763629294 * NANOS_PER_SECOND,
        "total_tokens": 4875 + 176,
        "input_tokens": 4875,
        "output_tokens": 176,
        "cache_read_tokens": 9455,
        "cache_creation_tokens": 1199,
        "cost_usd": "0.031531",
        "model": "claude-sonnet",
        "duration_ms": 3549,
    }
    assert [event["status"] for event in events if event["event"] == "tool_output"].count("error") == 1
    assert len({event["event_id"] for event in events}) == len(events)
    calls = [event["args"] for event in events if event["event"] == "tool_call"]
    assert len({orjson.dumps(args) for args in calls}) == len(calls) == 10
    orjson.dumps(events)


# SPEC §3.2 changed on 2026-11-23: tool arguments nobody knows never match, so the fixture's sessions
# (tool_results without tool_parameters) are no longer diagnosed as loops (sess-a1 had two loop groups,
# Grep x3 and Edit x3, and 6 duplicate calls; now only its tokens make a cost_explosion).
@pytest.mark.parametrize("session", ["sess-a1", "sess-b2"])
def test_fixture_sessions_are_not_loops(session: str) -> None:
    diagnosis = diagnose(to_run_events(fixture_session(session)))
    assert "infinite_tool_loop" not in {cause.type for cause in diagnosis.causes}
    assert diagnosis.cost_analysis["duplicate_calls"] == 0
    assert diagnosis.scores["loop_control"] == 100


def test_sess_a1_diagnosis() -> None:
    diagnosis = diagnose(to_run_events(fixture_session("sess-a1")))
    assert [(cause.type, cause.severity, cause.impact_score) for cause in diagnosis.causes] == [
        ("cost_explosion", "high", -13)  # 23,696 tokens >= 12,000: -min(30, 10 + 0 + 23696 // 6000)
    ]
    assert (diagnosis.trust_score, diagnosis.readiness_level) == (98, "review_recommended")


def test_three_reads_without_parameters_are_not_a_loop_but_with_the_same_ones_they_are() -> None:
    unknown = [record("tool_result", n, tool_name="Read", success=True) for n in (1, 2, 3)]
    known = [record("tool_result", n, tool_name="Read", success=True, tool_parameters='{"f": "a"}') for n in (1, 2, 3)]
    assert [event["args"] for event in to_run_events(unknown) if event["event"] == "tool_call"] == [
        {"call": 0},
        {"call": 1},
        {"call": 2},
    ]
    assert not diagnose(to_run_events(unknown)).causes
    assert [cause.type for cause in diagnose(to_run_events(known)).causes] == ["infinite_tool_loop"]


def test_the_call_position_counts_every_record_of_the_session() -> None:
    records = [record("user_prompt", 1), record("tool_result", 3, tool_name="Read"), record("api_request", 2)]
    (call,) = [event for event in to_run_events(records) if event["event"] == "tool_call"]
    assert call["args"] == {"call": 2}  # third record in time order


def test_tool_result_gives_a_call_then_its_output() -> None:
    events = to_run_events(
        [record("tool_result", 5, tool_name="Bash", success=False, tool_parameters='{"command": "ls"}')]
    )
    assert [(event["event"], event["tool"]) for event in events] == [("tool_call", "Bash"), ("tool_output", "Bash")]
    assert events[0]["args"] == {"command": "ls"}
    assert events[1]["status"] == "error"
    assert events[0]["event_id"].endswith(":0") and events[1]["event_id"].endswith(":1")
    assert events[0]["event_id"][:-2] == events[1]["event_id"][:-2]


# SPEC §3.2 changed on 2026-11-23: parameters that are absent or not a JSON object give
# {"call": <position>} (they were {} or {"raw": value}, which matched each other).
@pytest.mark.parametrize(
    ("parameters", "args"),
    [
        (None, {"call": 4}),
        ("  ", {"call": 4}),
        ('{"file_path": "/a", "limit": 3}', {"file_path": "/a", "limit": 3}),
        ("{}", {}),  # a JSON object, empty: known to be empty
        ("[1, 2]", {"call": 4}),
        ("not json", {"call": 4}),
        ("null", {"call": 4}),
        (7, {"call": 4}),
        (True, {"call": 4}),
        ({"already": "parsed"}, {"already": "parsed"}),
    ],
)
def test_tool_parameters_become_args(parameters: object, args: dict) -> None:
    assert tool_call_args(parameters, 4) == args
    assert parse_tool_parameters(parameters) == (None if "call" in args else args)


def test_api_error_gives_an_error_and_a_retry_after_the_first_attempt() -> None:
    """Its fields are kept (SPEC §3.2 as rewritten on 2026-11-25), the numbers read as integers; the
    session's last record is fatal (SPEC §3.2, §4.2: the session ended in it)."""
    first = to_run_events([record("api_error", 1, error="overloaded", status_code="529", attempt="1", model="m")])
    assert first == [
        {
            "event": "error_event",
            "event_id": first[0]["event_id"],
            "timestamp": NANOS_PER_SECOND,
            "error": "overloaded",
            "status_code": 529,
            "attempt": 1,
            "model": "m",
            "fatal": True,
        }
    ]
    later = to_run_events([record("api_error", 2, error="overloaded", attempt=3)])
    assert [event["event"] for event in later] == ["error_event", "retry_event"]
    assert later[1]["attempt"] == 3


def test_claude_code_usage_cost_cache_and_durations_are_kept() -> None:
    request = record(
        "api_request", 1, input_tokens="4875", output_tokens=176, cache_read_tokens="9455",
        cache_creation_tokens=1199, cost_usd=0.031531, model="claude-sonnet", duration_ms="3549",
    )  # fmt: skip
    tool = record("tool_result", 2, tool_name="Read", success="true", duration_ms="247")
    usage, _call, output = to_run_events([request, tool])
    assert {key: value for key, value in usage.items() if key not in ("event_id", "timestamp")} == {
        "event": "token_usage", "total_tokens": 5051, "input_tokens": 4875, "output_tokens": 176,
        "cache_read_tokens": 9455, "cache_creation_tokens": 1199, "cost_usd": "0.031531", "model": "claude-sonnet",
        "duration_ms": 3549,
    }  # fmt: skip
    assert (output["event"], output["duration_ms"]) == ("tool_output", 247)


def test_other_records_keep_their_bare_name_and_attributes() -> None:
    events = to_run_events([record("memory_event", 1, action="recall_failed", event="spoofed"), record(None, 2)])
    assert events[0]["event"] == "memory_event" and events[0]["action"] == "recall_failed"
    assert events[1]["event"] == "process_output"


def test_events_follow_record_time_and_ids_do_not_depend_on_arrival() -> None:
    records = [record("user_prompt", 3), record("user_prompt", 1), record("api_request", 2, input_tokens=1)]
    events = to_run_events(records)
    assert [event["timestamp"] for event in events] == [
        1 * NANOS_PER_SECOND,
        2 * NANOS_PER_SECOND,
        3 * NANOS_PER_SECOND,
    ]
    assert to_run_events(list(reversed(records))) == events


def test_identical_records_get_distinct_ids() -> None:
    events = to_run_events([record("user_prompt", 1), record("user_prompt", 1)])
    assert events[0]["event_id"] != events[1]["event_id"]
    assert events[1]["event_id"] == events[0]["event_id"].replace(":0", "-2:0")


def test_a_record_without_time_has_no_timestamp() -> None:
    (event,) = to_run_events([record("user_prompt", second=None)])
    assert "timestamp" not in event
