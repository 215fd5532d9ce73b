"""Walking every route of the OpenAPI schema: no key 401, wrong scope 403, another tenant 404."""

import re
import signal
import socket
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest

from service.testing.live import free_port, start_server_process
from tests.conftest import FIXTURES

OPEN_ROUTES = {"/healthz", "/readyz", "/.well-known/repute-keys.json"}
SCOPE_OF = {"post": "ingest", "delete": "admin"}


def _routes(base_url: str) -> list[tuple[str, str, str]]:
    schema = httpx.get(f"{base_url}/openapi.json").json()
    routes = []
    for path, operations in schema["paths"].items():
        for method in operations:
            concrete = path.replace("{run_id}", "run-x").replace("{identity}", "agent-x").replace("{key_id}", "k")
            routes.append((method, path, concrete))
    return routes


def _required_scope(method: str, path: str) -> str:
    if path.startswith(("/v1/keys", "/v1/sources", "/v1/profiles")) or path in ("/metrics", "/v1/reputation/rebuild"):
        return "admin"
    return SCOPE_OF.get(method, "read")


def test_every_route_needs_a_key(base_url: str) -> None:
    routes = _routes(base_url)
    assert len(routes) >= 15
    for method, path, concrete in routes:
        response = httpx.request(method, f"{base_url}{concrete}")
        if path in OPEN_ROUTES:
            assert response.status_code == 200, path
            continue
        assert response.status_code == 401, f"{method} {path}: {response.status_code}"
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["www-authenticate"] == "Bearer"
        bad = httpx.request(method, f"{base_url}{concrete}", headers={"Authorization": "Bearer rpt_nope_nope"})
        assert bad.status_code == 401, f"{method} {path} with an unknown key"


@pytest.mark.parametrize("authorization", ["", "Bearer", "Basic dXNlcjpwYXNz", "rpt_x_y"])
def test_a_missing_key_is_told_from_an_unknown_one(base_url: str, authorization: str) -> None:
    """Broken on purpose: the check `kind != "bearer" or not key` made `and` → an empty bearer key or
    another scheme is answered as an unknown key, and this test fails."""
    response = httpx.get(f"{base_url}/v1/runs", headers={"Authorization": authorization} if authorization else {})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert response.json()["detail"] == "an API key is required: Authorization: Bearer <key>"


def test_the_in_process_app_acts_as_its_principal_without_a_key(embedded_store, data_dir, tenant: str) -> None:
    """The CLI's in-process client (`acting_as`) sends no key. Broken on purpose: the bearer scheme's
    `auto_error` made True (service/api/auth.py) → FastAPI refuses every request without one: this fails."""
    from service.api.app import create_app
    from service.services.keys import Principal
    from service.settings import Settings
    from service.testing.live import serve_in_thread

    principal = Principal("in-process", tenant, frozenset({"read"}))
    with serve_in_thread(create_app(Settings(data_dir=data_dir), store=embedded_store, acting_as=principal)) as url:
        response = httpx.get(f"{url}/v1/runs")
    assert response.status_code == 200 and response.json()["runs"] == []


def test_every_route_checks_its_scope(base_url: str, make_client, tenant: str) -> None:
    for method, path, concrete in _routes(base_url):
        if path in OPEN_ROUTES:
            continue
        needed = _required_scope(method, path)
        others = tuple(s for s in ("ingest", "read", "admin") if s != needed)
        response = make_client(tenant, others).request(method, concrete)
        assert response.status_code == 403, f"{method} {path} without {needed}: {response.status_code}"
        # the plain value: before issue #28 it read "the <Scope.INGEST: 'ingest'> scope"
        assert response.json()["detail"] == f"this key lacks the {needed} scope", response.text


def test_tenants_never_see_each_other(make_client) -> None:
    owner, stranger = make_client("tenant-owner-" + _suffix()), make_client("tenant-stranger-" + _suffix())
    session = orjson.loads((FIXTURES / "session_multi.json").read_bytes())
    session["run_id"] = "shared-run-" + _suffix()
    created = owner.post("/v1/sessions", content=orjson.dumps(session))
    assert created.status_code == 201, created.text
    run_id, identity = session["run_id"], session["identity"]
    for path in (f"/v1/runs/{run_id}", f"/v1/runs/{run_id}/graph", f"/v1/runs/{run_id}/events",
                 f"/v1/identities/{identity}/reputation", f"/v1/identities/{identity}/history"):  # fmt: skip
        assert owner.get(path).status_code == 200, path
        assert stranger.get(path).status_code == 404, path
    assert stranger.post(f"/v1/runs/{run_id}/finalize").status_code == 404
    assert stranger.post(f"/v1/runs/{run_id}/events", json=[{"event": "decision"}]).status_code == 404
    assert all(r["run_id"] != run_id for r in stranger.get("/v1/runs").json()["runs"])
    assert [r["run_id"] for r in owner.get("/v1/runs").json()["runs"]] == [run_id]


def _suffix() -> str:
    import uuid

    return uuid.uuid4().hex[:8]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_is_open(base_url: str, path: str) -> None:
    response = httpx.get(f"{base_url}{path}")
    assert response.status_code == 200
    assert response.json()["status"] in {"ok", "ready"}


def _answer_before_the_body(base_url: str, method: str, path: str, authorization: str | None) -> int:
    """Sends the head of a request that announces a 1 MB body and only 10 bytes of it, and reads the
    answer: a server that waits for the body before checking the key never answers."""
    host, port = base_url.removeprefix("http://").split(":")
    head = f"{method.upper()} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    head += f"Authorization: {authorization}\r\n" if authorization else ""
    head += "Content-Length: 1000000\r\n\r\n[[],[],[],"
    with socket.create_connection((host, int(port)), timeout=20) as connection:
        connection.sendall(head.encode())
        status_line = connection.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_keys_and_scopes_are_checked_before_the_body_is_read(base_url: str, make_client, tenant: str) -> None:
    for method, path, concrete in _routes(base_url):
        if path in OPEN_ROUTES:
            continue
        needed = _required_scope(method, path)
        assert _answer_before_the_body(base_url, method, concrete, None) == 401, f"{method} {path}"
        wrong = make_client(tenant, tuple(s for s in ("ingest", "read", "admin") if s != needed))
        status = _answer_before_the_body(base_url, method, concrete, wrong.headers["Authorization"])
        assert status == 403, f"{method} {path} without {needed}"


MIB = 1024 * 1024
# Routes that take a body, each sent 16 MiB of `[[],[],...]` (about 8 million empty arrays once parsed).
BODY_ROUTES = ("/v1/keys", "/v1/reputation-events", "/v1/runs", "/v1/runs/r/finalize", "/v1/runs/r/events",
               "/v1/sessions", "/v1/sessions/batch", "/v1/logs", "/v1/traces")  # fmt: skip


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _post(url: str, body: bytes) -> int:
    return httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=120).status_code


def test_large_bodies_without_a_key_cost_the_server_no_memory(tmp_path: Path) -> None:
    port = free_port()
    server = start_server_process(tmp_path / "data", port)
    base = f"http://127.0.0.1:{port}"
    body = b"[" + b"[]," * ((16 * MIB - 4) // 3) + b"[]]"
    assert len(body) <= 16 * MIB
    try:
        for _ in range(3):
            httpx.post(f"{base}/v1/keys", content=b"[]")
        idle = _rss_bytes(server.pid)
        peak = idle
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.wait(0.02):
                peak = max(peak, _rss_bytes(server.pid))

        sampler = threading.Thread(target=sample)
        sampler.start()
        with ThreadPoolExecutor(len(BODY_ROUTES)) as pool:
            statuses = list(pool.map(lambda path: _post(f"{base}{path}", body), BODY_ROUTES))
        done.set()
        sampler.join()
        peak = max(peak, _rss_bytes(server.pid))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    assert statuses == [401] * len(BODY_ROUTES)
    print(f"server RSS idle {idle / MIB:.0f} MiB, peak {peak / MIB:.0f} MiB")
    assert peak - idle < 100 * MIB, f"idle {idle / MIB:.0f} MiB, peak {peak / MIB:.0f} MiB"


def test_only_the_operator_reads_the_metrics_of_every_tenant(make_client, tenant: str) -> None:
    """Fails without the operator check of /metrics (issue #28): any tenant's admin key read every
    tenant's counters."""
    refused = make_client(tenant, ("admin",)).get("/metrics")
    assert refused.status_code == 403 and "operator tenant 'default'" in refused.json()["detail"]
    operator = make_client("default", ("admin",)).get("/metrics")
    assert operator.status_code == 200 and "repute_http_requests_total" in operator.text


def test_requests_without_a_key_cannot_grow_the_metrics(base_url: str, make_client) -> None:
    """Each request names a new method and a new path; after the first few, /metrics stops growing."""
    client = make_client("default", ("admin",))

    def strangers(count: int) -> int:
        for n in range(count):
            httpx.request(f"M{uuid.uuid4().hex[:12].upper()}", f"{base_url}/v1/runs")
            httpx.get(f"{base_url}/no/such/path/{uuid.uuid4().hex}/{n}")
        return len(client.get("/metrics").text)

    strangers(10)  # the first of each kind (and of the /metrics reads themselves) add their label sets
    warmed = strangers(10)
    grown = strangers(230)
    methods = set(re.findall(r'method="([^"]*)"', client.get("/metrics").text))
    assert methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}, methods
    assert grown - warmed < 256  # counts gain digits; no label set is added
