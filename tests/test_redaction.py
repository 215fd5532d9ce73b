"""Personal data is never stored as sent (SPEC §3.2): `user.email` (REPUTE_REDACT_ATTRIBUTES) becomes a
per-tenant pseudonym in log records and spans, so one person's sessions still group."""

import hashlib
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import orjson
import pytest

from service.api.app import create_app
from service.judge.records import decode_record
from service.otlp.redaction import pseudonym, redacted
from service.services.keys import create_key
from service.settings import Settings
from service.store import sessions as session_store
from service.store import traces as trace_store
from service.store.client import Store
from service.testing.live import serve_in_thread

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


@pytest.fixture(scope="module")
def customer_url(embedded_store: Store, data_dir: Path) -> Iterator[str]:
    """A server redacting `customer.id` only (REPUTE_REDACT_ATTRIBUTES), not the default `user.email`."""
    settings = Settings(data_dir=data_dir, redact_attributes=["customer.id"])
    with serve_in_thread(create_app(settings, store=embedded_store)) as url:
        yield url


def _span_payload(store: Store, tenant: str, trace_id: str) -> dict:
    (payload,) = trace_store.load_payloads(store, tenant, [trace_id])
    return orjson.loads(payload)


def test_the_setting_names_what_is_redacted_on_both_receivers(
    customer_url: str, embedded_store: Store, tenant: str
) -> None:
    """Broken on purpose: either receiver redacting the default list instead of settings.redact_attributes
    (`settings.redact_attributes` → `["user.email"]` in otlp_logs.receive or otlp_traces.receive) → this
    test fails."""
    key = create_key(embedded_store, tenant, ["ingest", "read"], "redaction", datetime.now(UTC)).key
    headers = {"Authorization": f"Bearer {key}", "content-type": "application/json"}
    session_id = f"s-{uuid.uuid4().hex}"
    body = orjson.loads(_log_body(session_id))
    record = body["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["attributes"].append({"key": "customer.id", "value": {"stringValue": "cust-42"}})
    with httpx.Client(base_url=customer_url, headers=headers, timeout=60) as client:
        assert client.post("/v1/logs", content=orjson.dumps(body)).status_code == 200
        trace_id = uuid.uuid4().hex
        span = _span(trace_id, {"customer.id": "cust-42", "user.email": EMAIL})
        assert client.post("/v1/traces", content=orjson.dumps(_traces_body(span))).status_code == 200
    (stored,) = session_store.load_payloads(embedded_store, tenant, session_id)
    attributes = decode_record(stored).attributes
    assert (attributes["customer.id"], attributes["user.email"]) == (pseudonym(tenant, "cust-42"), EMAIL)
    span_attributes = _span_payload(embedded_store, tenant, trace_id)["attributes"]
    assert (span_attributes["customer.id"], span_attributes["user.email"]) == (pseudonym(tenant, "cust-42"), EMAIL)


def _span(trace_id: str, attributes: dict, events: list | None = None) -> dict:
    return {
        "traceId": trace_id, "spanId": "00000000000000a1", "name": "invoke_agent",
        "startTimeUnixNano": "1763700000000000000", "endTimeUnixNano": "1763700000001000000",
        "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()],
        "events": events or [],
    }  # fmt: skip


def _traces_body(span: dict, resource: dict | None = None) -> dict:
    resource_attributes = [{"key": key, "value": {"stringValue": value}} for key, value in (resource or {}).items()]
    return {"resourceSpans": [{"resource": {"attributes": resource_attributes}, "scopeSpans": [{"spans": [span]}]}]}


def test_resource_and_span_event_attributes_are_redacted(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    """Broken on purpose: `redacted_attributes` returning the resource's attributes as they are, or the
    traces receiver's `_redacted` keeping its events' attributes → this test fails."""
    trace_id = uuid.uuid4().hex
    event = {"name": "exception", "timeUnixNano": "1763700000000500000",
             "attributes": [{"key": "user.email", "value": {"stringValue": EMAIL}}]}  # fmt: skip
    body = _traces_body(_span(trace_id, {"gen_ai.operation.name": "chat"}, [event]), {"user.email": EMAIL})
    assert (
        client.post("/v1/traces", content=orjson.dumps(body), headers={"content-type": "application/json"}).status_code
        == 200
    )
    stored = _span_payload(embedded_store, tenant, trace_id)
    assert stored["resource_attributes"]["user.email"] == pseudonym(tenant, EMAIL)
    assert [event["attributes"]["user.email"] for event in stored["events"]] == [pseudonym(tenant, EMAIL)]
    session_id = f"s-{uuid.uuid4().hex}"
    assert (
        client.post("/v1/logs", content=_log_body(session_id), headers={"content-type": "application/json"}).status_code
        == 200
    )
    (record,) = session_store.load_payloads(embedded_store, tenant, session_id)
    assert decode_record(record).resource_attributes["user.email"] == pseudonym(tenant, EMAIL)
