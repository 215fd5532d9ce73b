"""Content-Encoding of request bodies (issue #28): gzip is read inflated on every route, within
REPUTE_MAX_BODY_BYTES; any other encoding is a 415 naming it, as problem+json, or on the OTLP receivers
as the google.rpc.Status their clients read. Before, a gzip body on a non-OTLP route was read as it came
("not JSON: ... surrogates not allowed") and a deflate body on /v1/traces as "JSON is malformed"."""

import gzip
import zlib

import httpx
import orjson
import pytest
from google.rpc import status_pb2

from tests.conftest import FIXTURES

GZIP = {"content-encoding": "gzip"}
MIB = 1024 * 1024


def _signal(n: int) -> dict:
    return {"identity": "agent-z", "category": "economic", "event_type": "payment_completed", "score_delta": 1,
            "reference_id": f"tx-{n}"}  # fmt: skip


def test_gzip_bodies_are_read_inflated_on_every_route(client: httpx.Client) -> None:
    session = orjson.loads((FIXTURES / "session_clean.json").read_bytes())
    whole = client.post("/v1/sessions", content=gzip.compress(orjson.dumps(session)), headers=GZIP)
    assert whole.status_code == 201, whole.text
    assert client.post("/v1/sessions", json=session).status_code == 200  # the same run, sent as is
    signals = client.post("/v1/reputation-events", content=gzip.compress(orjson.dumps([_signal(1)])), headers=GZIP)
    assert signals.status_code == 202 and signals.json()["accepted"] == 1, signals.text
    opened = client.post("/v1/runs", content=gzip.compress(b'{"identity": "agent-z"}'), headers=GZIP)
    assert opened.status_code == 201, opened.text
    appended = client.post(
        f"/v1/runs/{opened.json()['run_id']}/events", content=gzip.compress(b'[{"event": "decision"}]'), headers=GZIP
    )
    assert appended.status_code == 200, appended.text


def test_a_gzip_body_that_is_not_gzip_or_inflates_too_far_is_refused(client: httpx.Client) -> None:
    broken = client.post("/v1/reputation-events", content=orjson.dumps([_signal(2)]), headers=GZIP)
    assert broken.status_code == 400 and "gzip" in broken.json()["detail"], broken.text
    bomb = gzip.compress(b"[" + b" " * (17 * MIB) + b"]")  # 17 MiB of JSON in about 17 KiB
    too_large = client.post("/v1/reputation-events", content=bomb, headers=GZIP)
    assert too_large.status_code == 413 and "REPUTE_MAX_BODY_BYTES" in too_large.json()["detail"], too_large.text


@pytest.mark.parametrize("encoding", ["deflate", "br", "gzip, deflate"])
def test_another_encoding_is_a_415_naming_it(client: httpx.Client, encoding: str) -> None:
    body = zlib.compress(orjson.dumps([_signal(3)]))
    refused = client.post("/v1/reputation-events", content=body, headers={"content-encoding": encoding})
    assert refused.status_code == 415 and refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["errors"] == [{"field": "header.content-encoding", "message": refused.json()["detail"]}]
    assert f"Content-Encoding {encoding!r} is not supported" in refused.json()["detail"]


@pytest.mark.parametrize("path", ["/v1/traces", "/v1/logs"])
def test_the_otlp_receivers_answer_another_encoding_as_a_status(client: httpx.Client, path: str) -> None:
    body = zlib.compress(b'{"resourceSpans": []}')
    as_json = client.post(
        path, content=body, headers={"content-encoding": "deflate", "content-type": "application/json"}
    )
    assert as_json.status_code == 415 and as_json.json() == {
        "code": 3,
        "message": "Content-Encoding 'deflate' is not supported: send the body as is, or with gzip",
    }
    headers = {"content-encoding": "deflate", "content-type": "application/x-protobuf"}
    as_protobuf = client.post(path, content=body, headers=headers)
    assert as_protobuf.status_code == 415 and as_protobuf.headers["content-type"] == "application/x-protobuf"
    assert "deflate" in status_pb2.Status.FromString(as_protobuf.content).message
