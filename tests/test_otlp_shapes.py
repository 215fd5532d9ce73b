"""A body of another format at /v1/traces or /v1/logs is a 400 naming what it looks like (SPEC §3.4), never
a 200 that stores nothing; Tempo's exports (OTLP with the pre-1.0 names) are OTLP; `{}` is an empty request."""

import httpx
import orjson
import pytest

from tests.test_traces_real import FACTS, REAL

JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    ("name", "looks_like"),
    [
        ("agentevals__helm_agent_jaeger.json", "a Jaeger query-API export; `repute ingest FILE` reads it"),
        ("any-agent__openai_openinference_sdk_to_json.json", "a list of OpenTelemetry SDK spans"),
        ("any-agent__smolagents_openinference_trace.json", "an object holding a list of OpenTelemetry SDK spans"),
    ],
)
def test_a_trace_export_of_another_format_is_a_400_naming_it(client: httpx.Client, name: str, looks_like: str) -> None:
    for route in ("/v1/traces", "/v1/logs"):
        response = client.post(route, content=(REAL / name).read_bytes(), headers=JSON)
        assert response.status_code == 400, response.text
        assert looks_like in response.json()["message"], response.text


@pytest.mark.parametrize(
    ("route", "body", "looks_like"),
    [
        ("/v1/traces", {"resourceLogs": []}, "an OTLP logs request"),
        ("/v1/logs", {"resourceSpans": []}, "an OTLP traces request"),
        ("/v1/traces", {"events": [], "identity": "a"}, "a Repute run (POST it to /v1/sessions)"),
        ("/v1/logs", [1, 2], "a JSON array"),
        ("/v1/traces", "text", "a JSON string"),
    ],
)
def test_other_shapes_are_a_400_naming_them(client: httpx.Client, route: str, body: object, looks_like: str) -> None:
    response = client.post(route, content=orjson.dumps(body), headers=JSON)
    assert response.status_code == 400 and looks_like in response.json()["message"], response.text


def test_an_empty_request_is_a_valid_one(client: httpx.Client) -> None:
    for route in ("/v1/traces", "/v1/logs"):
        assert client.post(route, content=b"{}", headers=JSON).json() == {}


def test_a_tempo_export_is_read_as_otlp(client: httpx.Client) -> None:
    name = "agentevals__kagent_helm_tempo_batches.json"
    response = client.post("/v1/traces", content=(REAL / name).read_bytes(), headers=JSON)
    assert response.status_code == 200 and response.json() == {}, response.text
    facts = FACTS[name]
    run = client.post(f"/v1/runs/{facts['conversation_ids'][0]['value']}/finalize").json()
    children = [client.get(f"/v1/runs/{child['run_id']}").json() for child in run["child_runs"]]
    runs = [run, *children]  # the controller's run, and helm_agent's own (SPEC §3.5)
    assert run["status"] == "finalized" and sum(r["tool_calls"] for r in runs) == 1
    assert sum(r["total_tokens"] for r in runs) == facts["total_tokens"]
