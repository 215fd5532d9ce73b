"""Personal data is never stored as sent (SPEC §3.2): `user.email` (REPUTE_REDACT_ATTRIBUTES) becomes a
per-tenant pseudonym in log records and spans, so one person's sessions still group."""

import hashlib
import uuid

import httpx
import orjson

from service.otlp.redaction import pseudonym, redacted
from service.store import traces as trace_store
from service.store.client import Store

EMAIL = "ada@example.com"


def test_a_pseudonym_is_the_tenants_sha256_of_the_value() -> None:
    assert pseudonym("acme", EMAIL) == "sha256:" + hashlib.sha256(f"acme/{EMAIL}".encode()).hexdigest()[:16]
    assert pseudonym("acme", EMAIL) != pseudonym("other", EMAIL)
    attributes = {"user.email": EMAIL, "user.id": 7, "none": None}
    assert redacted(attributes, ["user.email", "none"], "acme") == {
        "user.email": pseudonym("acme", EMAIL), "user.id": 7, "none": None,
    }  # fmt: skip
    assert redacted(attributes, ["absent"], "acme") is attributes


def _log_body(session_id: str) -> bytes:
    attributes = [
        {"key": "session.id", "value": {"stringValue": session_id}},
        {"key": "user.email", "value": {"stringValue": EMAIL}},
    ]
    record = {"timeUnixNano": "1763700000000000000", "eventName": "claude_code.user_prompt", "attributes": attributes}
    resource = {"attributes": [{"key": "user.email", "value": {"stringValue": EMAIL}}]}
    return orjson.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]})


def _stored_emails(client: httpx.Client, run_id: str) -> list[str]:
    events = client.get(f"/v1/runs/{run_id}/events").json()["events"]
    return [event["data"]["user.email"] for event in events]


def test_log_records_and_spans_keep_a_pseudonym_only(make_client, tenant: str, embedded_store: Store) -> None:
    client, other = make_client(tenant), make_client(f"{tenant}-b")
    session_id = f"s-{uuid.uuid4().hex}"
    for who in (client, other):
        assert (
            who.post(
                "/v1/logs", content=_log_body(session_id), headers={"content-type": "application/json"}
            ).status_code
            == 200
        )
        who.post(f"/v1/runs/{session_id}/finalize").raise_for_status()
    assert _stored_emails(client, session_id) == [pseudonym(tenant, EMAIL)]
    assert _stored_emails(other, session_id) == [pseudonym(f"{tenant}-b", EMAIL)]

    span = {
        "traceId": uuid.uuid4().hex, "spanId": "00000000000000a1", "name": "invoke_agent",
        "startTimeUnixNano": "1763700000000000000", "endTimeUnixNano": "1763700000001000000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}},
                       {"key": "user.email", "value": {"stringValue": EMAIL}}],
    }  # fmt: skip
    body = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    assert client.post("/v1/traces", content=body, headers={"content-type": "application/json"}).status_code == 200
    (payload,) = trace_store.load_payloads(embedded_store, tenant, [span["traceId"]])
    assert orjson.loads(payload)["attributes"]["user.email"] == pseudonym(tenant, EMAIL)
