"""Run input (SPEC §3.1): the three encodings, normalization, and InputErrors that name the field."""

from datetime import UTC, datetime

import orjson
import pytest

from service.diagnosis import InputError, diagnose, normalize_events, parse_run, parse_runs
from service.vocab import EARLIEST, EARLIEST_MS, LATEST, LATEST_MS, TIME_RULE

EVENTS = [
    {"event": "tool_call", "tool": "search", "args": {"q": "x"}},
    {"type": "tool_output", "tool": "search", "used": False},
    {"note": "no type at all"},
]
NOV_20_MS = int(datetime(2026, 11, 20, 9, tzinfo=UTC).timestamp()) * 1000


def _error(data: bytes | str) -> InputError:
    with pytest.raises(InputError) as raised:
        parse_run(data)
    assert "\n" not in str(raised.value)
    return raised.value


def test_the_three_encodings_give_the_same_events() -> None:
    array = orjson.dumps(EVENTS)
    wrapped = orjson.dumps({"run_id": "r1", "agent_id": "bot", "trial": 2, "metadata": {"k": 1}, "events": EVENTS})
    ndjson = b"\n".join(orjson.dumps(e) for e in EVENTS) + b"\n\n"
    assert parse_run(array).events == parse_run(wrapped).events == parse_run(ndjson).events == EVENTS
    run = parse_run(wrapped.decode())
    assert (run.run_id, run.identity, run.agent_id, run.trial, run.metadata) == ("r1", "bot", "bot", 2, {"k": 1})
    assert parse_run(array).run_id is None and parse_run(array).metadata == {}
    assert parse_run(b"\xef\xbb\xbf" + array).events == EVENTS  # a UTF-8 BOM is tolerated


def test_one_line_of_ndjson_is_a_run_of_one_event() -> None:
    assert parse_run(b'{"event": "decision", "choice": "a"}\n').events == [{"event": "decision", "choice": "a"}]


def test_identity_wins_over_its_alias() -> None:
    run = parse_run(orjson.dumps({"identity": "a", "agent_id": "b", "events": []}))
    assert run.identity == "a"


def test_normalized_types_ids_and_tokens() -> None:
    events = normalize_events([*EVENTS, {"event": "TOOL_CALL"}, {"event": "custom", "event_id": "mine"},
                               {"event": "token_usage", "usage": {"input": 5, "output": 7}}])  # fmt: skip
    types = ["tool_call", "tool_output", "process_output", "tool_call", "custom", "token_usage"]
    assert [e.type for e in events] == types
    assert [e.event_id for e in events][3:] == ["event_3", "mine", "event_5"]
    assert [e.tokens for e in events] == [0, 0, 0, 0, 0, 12]
    assert events[0].data is EVENTS[0] and events[0].timestamp_ms is None


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        ("2026-11-20T09:00:00Z", NOV_20_MS),
        ("2026-11-20T10:00:00+01:00", NOV_20_MS),
        ("2026-11-20T09:00:00", NOV_20_MS),  # no zone: UTC
        ("2026-11-20T09:00:00.250Z", NOV_20_MS + 250),
        (NOV_20_MS // 1000, NOV_20_MS),  # seconds
        (NOV_20_MS / 1000 + 0.5, NOV_20_MS + 500),
        (NOV_20_MS, NOV_20_MS),  # milliseconds
        (NOV_20_MS * 1000 + 999, NOV_20_MS),  # microseconds
        (NOV_20_MS * 1_000_000 + 999_999, NOV_20_MS),  # nanoseconds, floored
        # The bounds of vocab.TIME_RULE, [EARLIEST, LATEST): the times the store accepts (epoch 0 is
        # not one since the diagnosis and the store share the bound).
        (EARLIEST.isoformat(), EARLIEST_MS),
        (EARLIEST_MS // 1000, EARLIEST_MS),
        ((LATEST_MS - 1) * 1000, LATEST_MS - 1),
        (None, None),
    ],
)
def test_timestamps(timestamp: object, expected: int | None) -> None:
    [event] = normalize_events([{"event": "decision", "timestamp": timestamp}])
    assert event.timestamp_ms == expected


@pytest.mark.parametrize("timestamp", ["yesterday", "", True, [1], 1e30, 2**64 - 1, "1800-01-01T00:00:00Z", -(10**13)])
def test_bad_timestamps_name_the_field(timestamp: object) -> None:
    error = _error(orjson.dumps({"events": [{"event": "x"}, {"event": "x", "timestamp": timestamp}]}))
    assert error.field == "events[1].timestamp"


@pytest.mark.parametrize(
    "timestamp",
    [0, EARLIEST_MS - 1, EARLIEST_MS // 1000 - 1, LATEST.isoformat(), LATEST_MS, "1969-12-31T23:59:59Z", "2200-01-01"],
)
def test_timestamps_outside_the_storable_range_name_the_field_and_the_range(timestamp: object) -> None:
    error = _error(orjson.dumps({"events": [{"event": "x", "timestamp": timestamp}]}))
    assert error.field == "events[0].timestamp"
    assert TIME_RULE in str(error) and TIME_RULE == "between 1970-05-01 and 2149-01-01"


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        (b"", "", "empty"),
        (b"  \n ", "", "empty"),
        (b"not json", "", "not JSON"),
        (b"42", "", "got a number"),
        (b'"text"', "", "got a string"),
        (b"null", "", "got null"),
        (b"[1, 2]", "events[0]", "must be a JSON object"),
        (b'{"events": {"no": "list"}}', "events", "must be an array"),
        (b'{"identity": "a"}', "events", 'needs an "events" array'),
        (b'{"events": [{"event": "x", "v": NaN}]}', "", "not JSON"),
        (b'{"events": [{"event": "x", "v": Infinity}]}', "", "not JSON"),
        (b'{"events": [{"event": "x", "v": 1e400}]}', "", "not JSON"),
        (b'{"events": [{"event": 5}]}', "events[0].event", "must be a string"),
        (b'{"events": [{"type": ["tool_call"]}]}', "events[0].type", "must be a string"),
        (b'{"events": [{"event_id": 7}]}', "events[0].event_id", "non-empty string"),
        (b'{"events": [{"event": "token_usage", "total_tokens": 1e30}]}', "events[0].total_tokens", "token count"),
        (b'{"events": [{"event": "token_usage", "usage": {"input": -1}}]}', "events[0].usage.input", "token count"),
        (b'{"events": [], "identity": 5}', "identity", "must be a string"),
        (b'{"events": [], "trial": "2"}', "trial", "must be an integer"),
        (b'{"events": [], "trial": true}', "trial", "must be an integer"),
        (b'{"events": [], "metadata": []}', "metadata", "must be an object"),
        (b'{"events": [], "execution": "ok"}', "execution", "must be an object"),
        (b'{"event": "a"}\n{"event": "b"}\n{"event": NaN}', "", "line 3"),
        (b'"\xff"', "", "not JSON"),
        (b"[" * 500 + b"]" * 500, "", "deeper than 64"),
    ],
)
def test_bad_input_names_the_problem(body: bytes, field: str, words: str) -> None:
    error = _error(body)
    assert error.field == field
    assert words in str(error)


def test_nesting_up_to_the_limit_is_accepted() -> None:
    args: object = {}
    for _ in range(60):
        args = {"a": args}
    assert parse_run(orjson.dumps([{"event": "tool_call", "args": args}])).events


def test_huge_numbers_in_args_are_just_values() -> None:
    body = b'[{"event": "tool_call", "tool": "t", "args": {"n": 1000000000000000000000000000000, "f": 1e30}}]'
    diagnosis = diagnose(parse_run(body).events)
    assert diagnosis.trust_score == 100
    assert diagnosis.to_dict()["causal_graph"]["nodes"][0]["label"] == 't:{"f":1e+30,"n":1e+30}'


def test_non_numeric_tokens_and_saturation_count_zero() -> None:
    events = [
        {"event": "token_usage", "total_tokens": "lots"},
        {"event": "token_usage", "usage": {"total": None}},
        {"event": "context_event", "saturation": "very"},
        {"event": "context_event", "saturation": "87%"},
    ]
    diagnosis = diagnose(parse_run(orjson.dumps(events)).events)
    assert diagnosis.total_tokens == 0
    assert [(c.type, c.evidence) for c in diagnosis.causes] == [("context_pollution", ("event_3",))]


def test_batches() -> None:
    run = {"identity": "a", "events": EVENTS}
    as_array = parse_runs(orjson.dumps([run, run]))
    as_object = parse_runs(orjson.dumps({"sessions": [run]}))
    as_ndjson = parse_runs(orjson.dumps(run) + b"\n" + orjson.dumps(run))
    assert [r.events for r in as_array] == [r.events for r in as_ndjson] == [EVENTS, EVENTS]
    assert as_object[0].identity == "a"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'[{"events": []}, 3]', "sessions[1]"),
        (b'[{"events": []}, {"events": [{"timestamp": "x"}]}]', "sessions[1].events[0].timestamp"),
        (b'{"runs": []}', "sessions"),
        (b'{"sessions": {}}', "sessions"),
        (b"7", ""),
    ],
)
def test_batch_errors_name_the_run(body: bytes, field: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_runs(body)
    assert raised.value.field == field


def test_diagnose_reads_raw_events_and_rejects_what_it_cannot_read() -> None:
    with pytest.raises(InputError) as raised:
        diagnose([{"event": "x"}, "not an event"])
    assert raised.value.field == "events[1]"
    with pytest.raises(InputError) as raised:
        diagnose([{"event": "token_usage", "tokens": float("nan")}])
    assert raised.value.field == "events[0].tokens"


def test_located_message() -> None:
    error = _error(b'[{"event": "x", "timestamp": "soon"}]')
    assert error.located().startswith("events[0].timestamp: timestamp 'soon'")
    assert _error(b"").located() == "the input is empty"
