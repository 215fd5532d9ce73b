"""A session's OTLP records as run events for the diagnosis engine (SPEC §3.2 mapping)."""

from collections import Counter

import orjson
import pytest

from service.judge import decode_json_body, group_by_session, parse_tool_parameters, to_run_events
from tests.judge_support import NANOS_PER_SECOND, fixture_lines, record


def fixture_session(session: str) -> list:
    records = [item for line in fixture_lines() for item in decode_json_body(line).records]
    return group_by_session(records)[session]


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
    assert call == {
        "event": "tool_call",
        "event_id": call["event_id"],
        "timestamp": 1763629231 * NANOS_PER_SECOND,
        "tool": "Read",
        "args": {},
    }
    assert output == {
        "event": "tool_output",
        "event_id": output["event_id"],
        "timestamp": 1763629231 * NANOS_PER_SECOND,
        "tool": "Read",
        "status": "ok",
    }
    assert events[7] == {
        "event": "token_usage",
        "event_id": events[7]["event_id"],
        "timestamp": 1763629294 * NANOS_PER_SECOND,
        "total_tokens": 4875 + 176,
    }
    assert [event["status"] for event in events if event["event"] == "tool_output"].count("error") == 1
    assert len({event["event_id"] for event in events}) == len(events)
    orjson.dumps(events)


def test_tool_result_gives_a_call_then_its_output() -> None:
    events = to_run_events(
        [record("tool_result", 5, tool_name="Bash", success=False, tool_parameters='{"command": "ls"}')]
    )
    assert [(event["event"], event["tool"]) for event in events] == [("tool_call", "Bash"), ("tool_output", "Bash")]
    assert events[0]["args"] == {"command": "ls"}
    assert events[1]["status"] == "error"
    assert events[0]["event_id"].endswith(":0") and events[1]["event_id"].endswith(":1")
    assert events[0]["event_id"][:-2] == events[1]["event_id"][:-2]


@pytest.mark.parametrize(
    ("parameters", "args"),
    [
        (None, {}),
        ("  ", {}),
        ('{"file_path": "/a", "limit": 3}', {"file_path": "/a", "limit": 3}),
        ("[1, 2]", {"raw": "[1, 2]"}),
        ("not json", {"raw": "not json"}),
        (7, {"raw": 7}),
        ({"already": "parsed"}, {"already": "parsed"}),
    ],
)
def test_tool_parameters_become_args(parameters: object, args: dict) -> None:
    assert parse_tool_parameters(parameters) == args


def test_api_error_gives_an_error_and_a_retry_after_the_first_attempt() -> None:
    first = to_run_events([record("api_error", 1, error="overloaded", status_code="529", attempt="1", model="m")])
    assert first == [
        {
            "event": "error_event",
            "event_id": first[0]["event_id"],
            "timestamp": NANOS_PER_SECOND,
            "error": "overloaded",
            "status_code": "529",
            "attempt": "1",
        }
    ]
    later = to_run_events([record("api_error", 2, error="overloaded", attempt=3)])
    assert [event["event"] for event in later] == ["error_event", "retry_event"]
    assert later[1]["attempt"] == 3


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
