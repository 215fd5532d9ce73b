"""Schema-driven fuzzing of every route of the live server: whatever a client sends, never a 5xx.

Cases come from schemathesis's strategies for each operation of the live OpenAPI schema, driven by
plain hypothesis (schemathesis's own pytest plugin does not support this pytest version)."""

import os

import schemathesis
from hypothesis import HealthCheck, given, settings

from service.services.keys import SCOPES

EXAMPLES_PER_OPERATION = int(os.environ.get("REPUTE_FUZZ_EXAMPLES", 30))


def test_no_input_gives_a_server_error(base_url: str, make_client, tenant: str) -> None:
    key = make_client(tenant, SCOPES).headers["Authorization"]
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=operation.as_strategy())
        def never_a_server_error(case) -> None:
            response = case.call(headers={"Authorization": key}, timeout=60)
            where = f"{case.method} {case.formatted_path}"
            assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
            content_type = "".join(response.headers.get("content-type", []))  # a list of values
            if case.path in ("/v1/logs", "/v1/traces") and response.status_code == 400:
                # OTLP/HTTP answers an undecodable request with a google.rpc.Status, not problem+json.
                assert response.json()["code"] == 3, f"{where}: {response.text[:200]}"
            elif response.status_code >= 400 and response.status_code != 405:
                assert content_type.startswith("application/problem+json"), f"{where}: {response.text[:200]}"

        never_a_server_error()
