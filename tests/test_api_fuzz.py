"""Schema-driven fuzzing of every route of the live server: whatever a client sends, never a 5xx."""

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from service.keys import SCOPES


@pytest.fixture
def api_schema(base_url: str):
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.fixture
def fuzz_key(make_client, tenant: str) -> str:
    return make_client(tenant, SCOPES).headers["Authorization"]


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_gives_a_server_error(case, fuzz_key: str) -> None:
    response = case.call(headers={"Authorization": fuzz_key}, timeout=60)
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400 and response.status_code != 405:
        assert response.headers["content-type"].startswith("application/problem+json"), response.text[:200]
