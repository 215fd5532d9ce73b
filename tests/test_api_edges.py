"""What a person or a tool meets at the edges of the API: / and /docs, request ids and the access log,
and JSON bodies whatever the Content-Type says."""

import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from service.testing.live import free_port, wait_until
from tests.conftest import FIXTURES

JSON_ROUTES = (
    ("/v1/sessions", b"{not json"),
    ("/v1/sessions/batch", b"[{"),
    ("/v1/runs", b"{not json"),
    ("/v1/runs/any-run/finalize", b"{not json"),
    ("/v1/reputation-events", b"[1,"),
    ("/v1/keys", b"{not json"),
)


def test_the_root_redirects_to_the_run_explorer(base_url: str) -> None:
    response = httpx.get(f"{base_url}/")
    assert response.status_code == 307 and response.headers["location"] == "/ui/"


def test_docs_are_served_from_the_package(base_url: str) -> None:
    page = httpx.get(f"{base_url}/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    urls = re.findall(r'(?:href|src)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'", page.text)
    assert urls and all(url.startswith("/") for url in urls), urls  # nothing from another host
    assert "validatorUrl" in page.text  # the online validator badge is off
    for url in urls:
        asset = httpx.get(f"{base_url}{url}")
        assert asset.status_code == 200 and asset.content, url
    assert "SwaggerUIBundle" in httpx.get(f"{base_url}/docs/assets/swagger-ui-bundle.js").text
    assert httpx.get(f"{base_url}/redoc").status_code == 404  # it would need a CDN


def test_every_response_carries_a_request_id(client: httpx.Client) -> None:
    generated = client.get("/v1/runs")
    assert re.fullmatch(r"[0-9a-f]{32}", generated.headers["x-request-id"])
    echoed = client.get("/v1/runs", headers={"X-Request-ID": "ci-run-42/step:3"})
    assert echoed.headers["x-request-id"] == "ci-run-42/step:3"
    for insane in ("has space", "x" * 129, "semi;colon", ""):
        replaced = client.get("/v1/runs", headers={"X-Request-ID": insane})
        assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"]), insane
    problem = client.get("/v1/runs/no-such-run", headers={"X-Request-ID": "trace-404"})
    assert problem.status_code == 404 and problem.headers["x-request-id"] == "trace-404"
    anonymous = httpx.get(f"{client.base_url}/healthz", headers={"X-Request-ID": "probe-1"})
    assert anonymous.headers["x-request-id"] == "probe-1"


def test_one_access_log_line_per_request(client: httpx.Client, tenant: str, caplog: pytest.LogCaptureFixture) -> None:
    def logged() -> dict[str, dict]:
        entries = [orjson.loads(r.getMessage()) for r in caplog.records if r.name == "repute.access"]
        return {entry["request_id"]: entry for entry in entries}

    with caplog.at_level(logging.INFO, logger="repute.access"):
        client.get("/v1/runs", params={"limit": 5}, headers={"X-Request-ID": "logged-1"})
        httpx.get(f"{client.base_url}/healthz", headers={"X-Request-ID": "logged-2"})
        # The line is written once the response has gone out: wait for it.
        assert wait_until(lambda: {"logged-1", "logged-2"} <= logged().keys())
    listed, health = logged()["logged-1"], logged()["logged-2"]
    assert {k: listed[k] for k in ("method", "path", "status", "tenant")} == {
        "method": "GET", "path": "/v1/runs", "status": 200, "tenant": tenant,
    }  # fmt: skip
    assert isinstance(listed["duration_ms"], float) and listed["duration_ms"] >= 0
    assert listed["time"].endswith("Z")
    assert health["tenant"] is None and health["status"] == 200


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None])
def test_json_bodies_are_read_whatever_the_content_type(client: httpx.Client, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    opened = client.post("/v1/runs", content=b'{"identity": "agent-curl"}', headers=headers)
    assert opened.status_code == 201, opened.text
    signal = b'[{"identity": "agent-curl", "category": "economic", "event_type": "paid", "score_delta": 1}]'
    assert client.post("/v1/reputation-events", content=signal, headers=headers).status_code == 202
    session = (FIXTURES / "session_clean.json").read_bytes()
    assert client.post("/v1/sessions", content=session, headers=headers).status_code in (200, 201)


@pytest.mark.parametrize(("path", "body"), JSON_ROUTES, ids=[path for path, _ in JSON_ROUTES])
def test_bad_json_is_the_same_400_everywhere(client: httpx.Client, path: str, body: bytes) -> None:
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["title"] == "Bad Request" and problem["detail"].startswith("not JSON: ")
    assert problem["errors"] == [{"field": "body", "message": problem["detail"]}]


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_serve_listens_on_repute_port_and_prints_where_things_are(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "REPUTE_DATA_DIR": str(tmp_path), "REPUTE_PORT": str(port)}
    server = subprocess.Popen(
        [sys.executable, "-m", "service", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        assert wait_until(lambda: _answers(f"{url}/readyz") or server.poll() is not None, attempts=600)
        assert _answers(f"{url}/readyz")
    finally:
        server.terminate()
        output = server.communicate(timeout=60)[0]
    assert f"UI        {url}/ui/" in output and f"API docs  {url}/docs" in output and f"API       {url}/v1" in output
    access = [orjson.loads(line) for line in output.splitlines() if line.startswith('{"time"')]
    assert any(entry["path"] == "/readyz" and entry["status"] == 200 for entry in access), output
