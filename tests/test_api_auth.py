"""Walking every route of the OpenAPI schema: no key 401, wrong scope 403, another tenant 404."""

import httpx
import orjson
import pytest

from tests.conftest import FIXTURES

OPEN_ROUTES = {"/healthz", "/readyz"}
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
    if path.startswith(("/v1/keys", "/v1/sources")) or path == "/metrics":
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


def test_every_route_checks_its_scope(base_url: str, make_client, tenant: str) -> None:
    for method, path, concrete in _routes(base_url):
        if path in OPEN_ROUTES:
            continue
        needed = _required_scope(method, path)
        others = tuple(s for s in ("ingest", "read", "admin") if s != needed)
        response = make_client(tenant, others).request(method, concrete)
        assert response.status_code == 403, f"{method} {path} without {needed}: {response.status_code}"


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
