"""An execution object or a staged error_event that cannot be classified (SPEC §6) is a 422 naming the
field on every write route, refused before anything is stored (issue #28: each of these was a 500, and
a streamed run holding such an event could never be finalized).

Broken on purpose: with `OutcomeInputError` a plain ValueError again (not a FieldError), the staged
error_event and sweeper tests fail (500s, and a sweep that retries); without the `Execution` model's
checks in `material_of`, the execution-object tests do."""

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest

from service.services import finalize
from service.store.client import Store

BAD_EXECUTIONS: list[tuple[dict[str, Any], str]] = [
    ({"status": "weird"}, "execution.status"),
    ({"score": 2}, "execution.score"),
    ({"score": "0.5"}, "execution.score"),
    ({"stage": 5}, "execution.stage"),
    ({"status": "execution_error", "stage": "agent", "reason": "Bad Reason"}, "execution.reason"),
    ({"status": "execution_error", "stage": "agent", "reason": "x\nPassed: 999"}, "execution.reason"),
]
BAD_EVENT = {"event": "error_event", "stage": "agent", "reason": "Bad Reason", "error": "boom"}
GOOD_EVENT = {"event": "tool_call", "tool": "search", "args": {"q": "x"}}


def _fields(response: httpx.Response) -> list[str]:
    assert response.status_code == 422, f"{response.status_code} {response.text[:300]}"
    assert response.headers["content-type"].startswith("application/problem+json")
    return [error["field"] for error in response.json()["errors"]]


def _run(run_id: str, **fields: Any) -> dict[str, Any]:
    return {"run_id": run_id, "identity": "agent-outcome", "events": [GOOD_EVENT], **fields}


@pytest.mark.parametrize(("execution", "field"), BAD_EXECUTIONS)
def test_a_bad_execution_object_is_a_422_on_every_route(client: httpx.Client, execution: dict, field: str) -> None:
    run_id = f"run-{uuid.uuid4().hex}"
    assert field in _fields(client.post("/v1/sessions", json=_run(run_id, execution=execution)))
    assert client.get(f"/v1/runs/{run_id}").status_code == 404

    batch = {"sessions": [_run(f"{run_id}-ok"), _run(f"{run_id}-bad", execution=execution)]}
    assert f"sessions[1].{field}" in _fields(client.post("/v1/sessions/batch", json=batch))
    assert client.get(f"/v1/runs/{run_id}-ok").status_code == 404  # all or nothing

    client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-outcome"}).raise_for_status()
    client.post(f"/v1/runs/{run_id}/events", json=[GOOD_EVENT]).raise_for_status()
    assert field in _fields(client.post(f"/v1/runs/{run_id}/finalize", json={"execution": execution}))
    assert client.get(f"/v1/runs/{run_id}").json()["status"] == "open"
    finalized = client.post(f"/v1/runs/{run_id}/finalize", json={"execution": {"score": 0.9}})
    assert finalized.status_code == 200 and finalized.json()["execution_status"] == "ok", finalized.text


def test_a_staged_error_event_with_a_bad_reason_is_a_422_on_every_route(client: httpx.Client) -> None:
    run_id = f"run-{uuid.uuid4().hex}"
    assert "events[1].reason" in _fields(client.post("/v1/sessions", json=_run(run_id, events=[GOOD_EVENT, BAD_EVENT])))
    batch = {"sessions": [_run(f"{run_id}-ok"), _run(f"{run_id}-bad", events=[BAD_EVENT])]}
    assert "sessions[1].events[0].reason" in _fields(client.post("/v1/sessions/batch", json=batch))
    assert client.get(f"/v1/runs/{run_id}").status_code == 404
    assert client.get(f"/v1/runs/{run_id}-ok").status_code == 404

    client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-outcome"}).raise_for_status()
    assert "events[1].reason" in _fields(client.post(f"/v1/runs/{run_id}/events", json=[GOOD_EVENT, BAD_EVENT]))
    finalized = client.post(f"/v1/runs/{run_id}/finalize")
    assert finalized.status_code == 200 and finalized.json()["event_count"] == 0, finalized.text


def _log_record(session_id: str, name: str, attributes: dict[str, str]) -> dict[str, Any]:
    pairs = {"session.id": session_id, **attributes}
    return {
        "timeUnixNano": "1763700000000000000",
        "eventName": name,
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in pairs.items()],
    }


def test_the_sweeper_closes_a_session_it_cannot_classify_instead_of_retrying_it(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    session_id = f"s-{uuid.uuid4().hex}"
    record = _log_record(session_id, "error_event", {"stage": "agent", "reason": "Bad Reason"})
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    posted = client.post("/v1/logs", content=orjson.dumps(body), headers={"content-type": "application/json"})
    assert posted.status_code == 200, posted.text

    now = datetime.now(UTC)
    assert finalize.finalize_or_close(embedded_store, tenant, session_id, now, 0.8) is False  # closed, not finalized
    closed = client.get(f"/v1/runs/{session_id}").json()
    assert closed["status"] == "finalized" and closed["execution_status"] == "execution_error"
    assert (closed["failure_stage"], closed["failure_reason_code"]) == ("evaluator", "evaluator_error")
    assert "events[0].reason" in closed["failure_message"]
    assert finalize.finalize_or_close(embedded_store, tenant, session_id, now, 0.8) is True  # stored as it was
    assert client.get(f"/v1/runs/{session_id}").json()["finalized_at"] == closed["finalized_at"]


def test_an_execution_object_is_checked_once_by_the_receiver(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #39: the receiver checked a posted run's execution object twice (its `Execution` model, then
    `outcome`'s own check); the finalize reads it once more to classify the run. Counted: the outcome
    module reads it once, at the finalize. Broken on purpose: `material_of` calling `check_outcome_inputs`
    with the execution object again."""
    from service import outcome

    message, reads = f"provider down {uuid.uuid4().hex}", [0]
    read = outcome._validated_execution

    def counted(execution: Any) -> Any:
        reads[0] += bool(execution) and execution.get("message") == message
        return read(execution)

    monkeypatch.setattr(outcome, "_validated_execution", counted)
    execution = {"status": "execution_error", "stage": "agent", "reason": "provider_error", "message": message}
    posted = client.post("/v1/sessions", json=_run(f"once-{uuid.uuid4().hex}", execution=execution))
    assert posted.status_code == 201 and posted.json()["execution_status"] == "execution_error"
    assert reads[0] == 1
