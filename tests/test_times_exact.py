"""Times are read exactly on every path (SPEC §3.2): integer nanoseconds stay integers, never pass
through a binary float, so a record at 1791447318137000000 ns is .137, never .136. (A mypyc build of
the engine read them through a C double and put 37.6% of them a millisecond early: issue #25.)"""

import uuid
from datetime import UTC, datetime, timedelta

import httpx
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.diagnosis.events import timestamp_ms_of

# Nanoseconds above 2^53 (where a double cannot hold every integer) and within the storable range.
NANOS = st.integers(10**17, 5_600_000_000_000_000_000)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def test_the_documented_instant() -> None:
    assert timestamp_ms_of({"timestamp": 1791447318137000000}, 0) == 1791447318137


@settings(max_examples=2000)
@given(NANOS)
def test_integer_nanoseconds_floor_to_their_millisecond(nanos: int) -> None:
    assert timestamp_ms_of({"timestamp": nanos}, 0) == nanos // 1_000_000
    aligned = nanos - nanos % 1_000_000
    assert timestamp_ms_of({"timestamp": aligned}, 0) == aligned // 1_000_000


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(NANOS, min_size=1, max_size=5))
def test_a_posted_run_and_a_log_session_store_the_exact_millisecond(client: httpx.Client, times: list[int]) -> None:
    aligned = [nanos - nanos % 1_000_000 for nanos in times]
    run_id = f"exact-{uuid.uuid4().hex}"
    events = [{"event": "tool_call", "tool": "t", "args": {"i": i}, "timestamp": t} for i, t in enumerate(times)]
    posted = client.post("/v1/sessions", json={"run_id": run_id, "identity": "clock", "events": events})
    assert posted.status_code in (200, 201), posted.text
    run = client.get(f"/v1/runs/{run_id}").json()
    assert (_read(run["started_at"]), _read(run["ended_at"])) == (_moment(min(times)), _moment(max(times)))

    records = [
        {"timeUnixNano": str(t), "eventName": "claude_code.user_prompt",
         "attributes": [{"key": "session.id", "value": {"stringValue": f"log-{run_id}"}}]}
        for t in aligned
    ]  # fmt: skip
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    answer = client.post("/v1/logs", content=orjson.dumps(body), headers={"content-type": "application/json"})
    assert answer.status_code == 200 and "partialSuccess" not in answer.json(), answer.text
    session = client.post(f"/v1/runs/log-{run_id}/finalize").json()
    assert (_read(session["started_at"]), _read(session["ended_at"])) == (_moment(min(aligned)), _moment(max(aligned)))


def _moment(nanos: int) -> datetime:
    return EPOCH + timedelta(milliseconds=nanos // 1_000_000)


def _read(text: str) -> datetime:
    return datetime.fromisoformat(text)
