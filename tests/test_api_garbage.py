"""Byte-level garbage on every write route: invalid UTF-8 (plain and gzip), truncated gzip, deflate and
zstd headers, random bytes. Never a 5xx, garbage is a 4xx on every route (the OTLP receivers included:
only bytes that are an OTLP request, possibly empty, may be accepted), and a refusal writes nothing
(issue #28: invalid UTF-8 in OTLP/JSON was a 500, a `UnicodeDecodeError` escaping the decoder).

Fixed cases first (each once a 500 or a confusing answer), then hypothesis's bytes, derandomized in CI
(the `ci` profile) like the schema fuzz."""

import gzip
import zlib

import httpx
import orjson
import pytest
from google.protobuf.message import DecodeError
from google.rpc import status_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

OTLP_ROUTES = ("/v1/logs", "/v1/traces")
WRITE_ROUTES = (*OTLP_ROUTES, "/v1/sessions", "/v1/sessions/batch", "/v1/reputation-events")
INVALID_UTF8 = (
    b'{"resourceLogs": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "\xff\xfe"}}]}}]}'
)
INVALID_UTF8_SPANS = INVALID_UTF8.replace(b"resourceLogs", b"resourceSpans")
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

CASES: list[tuple[str, bytes, dict[str, str]]] = [
    ("invalid UTF-8", INVALID_UTF8, {}),
    ("invalid UTF-8 in spans", INVALID_UTF8_SPANS, {}),
    ("invalid UTF-8, gzip", gzip.compress(INVALID_UTF8), {"content-encoding": "gzip"}),
    ("invalid UTF-8 in spans, gzip", gzip.compress(INVALID_UTF8_SPANS), {"content-encoding": "gzip"}),
    ("truncated gzip", gzip.compress(b'{"resourceLogs": []}' * 50)[:30], {"content-encoding": "gzip"}),
    ("deflate", zlib.compress(b'{"resourceLogs": []}'), {"content-encoding": "deflate"}),
    ("zstd header", ZSTD_MAGIC + b"\x00" * 16, {"content-encoding": "zstd"}),
    ("zstd header, no encoding", ZSTD_MAGIC + b"\x00" * 16, {}),
    ("a lone surrogate escape", b'{"events": [{"event": "\\ud800"}], "identity": "a"}', {}),
]


def _check(response: httpx.Response, route: str, what: str) -> None:
    assert response.status_code < 500, f"{route} {what}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400 and route in OTLP_ROUTES:  # a google.rpc.Status, in the request's encoding
        protobuf = response.headers["content-type"] == "application/x-protobuf"
        code = status_pb2.Status.FromString(response.content).code if protobuf else response.json()["code"]
        assert code in (3, 8), f"{route} {what}: {response.content[:200]!r}"
    elif response.status_code >= 400:
        assert response.headers["content-type"].startswith("application/problem+json"), f"{route} {what}"


@pytest.mark.parametrize(("what", "body", "headers"), CASES, ids=[case[0] for case in CASES])
def test_garbage_is_a_4xx_on_every_write_route(client: httpx.Client, what: str, body: bytes, headers: dict) -> None:
    """Broken on purpose: `foreign_body` giving up on a body that is not UTF-8 (the traces decoder skips
    the logs' key and answers an empty success) → this test fails."""
    for route in WRITE_ROUTES:
        response = client.post(route, content=body, headers={"content-type": "application/json", **headers})
        _check(response, route, what)
        assert response.status_code >= 400, f"{route} {what} accepted"
    assert client.get("/v1/runs").json()["runs"] == []


def test_invalid_utf8_in_otlp_json_is_a_400_naming_it(client: httpx.Client) -> None:
    for route, body in (("/v1/logs", INVALID_UTF8), ("/v1/traces", INVALID_UTF8_SPANS)):
        for encoded, headers in ((body, {}), (gzip.compress(body), {"content-encoding": "gzip"})):
            response = client.post(route, content=encoded, headers={"content-type": "application/json", **headers})
            assert response.status_code == 400, response.text
            assert "utf-8" in response.json()["message"].lower(), response.text


@settings(max_examples=60, suppress_health_check=list(HealthCheck))
@given(body=st.binary(max_size=512), gzipped=st.booleans(), protobuf=st.booleans())
def test_random_bytes_never_give_a_server_error(
    client: httpx.Client, body: bytes, gzipped: bool, protobuf: bool
) -> None:
    """On the OTLP receivers, bytes that are not a request are refused (a 4xx). Broken on purpose: /v1/logs
    answering an empty success to a body it cannot decode → this test fails."""
    raw = body
    headers = {"content-type": "application/x-protobuf" if protobuf else "application/json"}
    if gzipped:
        body, headers["content-encoding"] = gzip.compress(body), "gzip"
    for route in WRITE_ROUTES:
        response = client.post(route, content=body, headers=headers)
        _check(response, route, repr(body[:40]))
        if route in OTLP_ROUTES and not _valid_otlp(route, raw, protobuf):
            assert response.status_code >= 400, f"{route} accepted {raw[:40]!r}: {response.text[:200]}"


def _valid_otlp(route: str, body: bytes, protobuf: bool) -> bool:
    """Whether bytes are a request the OTLP receiver may accept: a message of its protobuf (random bytes
    sometimes are), or the JSON of an empty one (`{}`, the resources null or empty)."""
    message = {"/v1/logs": ExportLogsServiceRequest, "/v1/traces": ExportTraceServiceRequest}[route]
    if protobuf:
        try:
            message.FromString(body)
        except DecodeError:
            return False
        return True
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    key = "resourceLogs" if route == "/v1/logs" else "resourceSpans"
    return isinstance(document, dict) and set(document) <= {key} and not document.get(key)
