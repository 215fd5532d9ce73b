"""Schema-driven fuzzing of every route of the live server: whatever a client sends, never a 5xx, and what
the schema forbids is refused (a 4xx), never accepted.

Cases come from schemathesis's strategies for each operation of the live OpenAPI schema, driven by
plain hypothesis (schemathesis's own pytest plugin does not support this pytest version), in both of
its modes: positive (bodies and parameters the schema allows) and negative (ones it forbids).

CI draws the same examples on every run (the `ci` hypothesis profile, tests/conftest.py), so a defect
the fuzz can find never turns CI red at random. `make fuzz` draws fresh random examples, 1,000 per
operation and mode; each finding becomes an entry of FOUND below, replayed on every run.
"""

import os
from typing import Any

import schemathesis
from hypothesis import HealthCheck, example, given, settings
from schemathesis import GenerationMode
from schemathesis.core.parameters import ParameterLocation

from service.services.keys import SCOPES

EXAMPLES_PER_OPERATION = int(os.environ.get("REPUTE_FUZZ_EXAMPLES", 30))
OTLP_ROUTES = ("/v1/logs", "/v1/traces")
CLIENT_INPUT = frozenset({ParameterLocation.BODY, ParameterLocation.QUERY, ParameterLocation.PATH})

# What the fuzz found, by operation ("METHOD /path"): the bodies that once gave a 5xx.
FOUND: dict[str, list[Any]] = {
    # Issue #32: a trial beyond the UInt32 column reached the insert (500 "Unable to create native array").
    "POST /v1/sessions": [{"events": [], "identity": "0", "trial": 4294967296}],
}


def check_answer(case: Any, response: Any) -> None:
    """Never a 5xx; an input the schema forbids (the negative mode's) is a 4xx, never accepted; a refusal is
    problem+json, or a google.rpc.Status on the OTLP routes. (Seen red: `{"resourceLogs": null}` answered
    200 while the schema said an array only; protobuf's JSON mapping reads null as the empty list, so the
    schema now says so.)"""
    where = f"{case.method} {case.formatted_path}"
    assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
    if forbidden := _forbidden(case):
        sent = f"{case.body!r}"[:200] if case.body is not None else f"{case.query} {case.path_parameters}"
        assert response.status_code >= 400, (
            f"{where}: {response.status_code} for {sent} ({forbidden}): {response.text[:200]}"
        )
    content_type = "".join(response.headers.get("content-type", []))  # a list of values
    if case.path in OTLP_ROUTES and response.status_code in (400, 415):
        assert response.json()["code"] == 3, f"{where}: {response.text[:200]}"
    elif response.status_code >= 400 and response.status_code != 405:
        assert content_type.startswith("application/problem+json"), f"{where}: {response.text[:200]}"


def _forbidden(case: Any) -> str:
    """What of the request the schema forbids, as schemathesis's negative mode made it: its body, query or
    path ("" when none: a header it made negative is replaced by the test's key, and a query parameter the
    schema does not name is ignored, as HTTP APIs do, not refused)."""
    meta = case._meta
    if meta is None:
        return ""
    description = meta.phase.data.description or ""
    mutated = [
        location.name
        for location, info in meta.components.items()
        if info.mode is GenerationMode.NEGATIVE and location in CLIENT_INPUT
        and not (location is ParameterLocation.QUERY and "additionalProperties" in description)
    ]  # fmt: skip
    return f"{', '.join(mutated)}: {description}" if mutated else ""


def _takes_input(operation: Any) -> bool:
    """Whether anything of the request is the client's to get wrong (else there is no negative case)."""
    return any(len(part) for part in (operation.body, operation.query, operation.path_parameters))


def test_no_input_gives_a_server_error(base_url: str, make_client, tenant: str) -> None:
    key = make_client(tenant, SCOPES).headers["Authorization"]
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    replayed = 0
    for operation in operations:
        name = f"{operation.method.upper()} {operation.path}"
        for mode in GenerationMode if _takes_input(operation) else [GenerationMode.POSITIVE]:

            @settings(max_examples=EXAMPLES_PER_OPERATION, suppress_health_check=list(HealthCheck))
            @given(case=operation.as_strategy(generation_mode=mode))
            def never_a_server_error(case: Any) -> None:
                check_answer(case, case.call(headers={"Authorization": key}, timeout=60))

            for body in FOUND.get(name, []) if mode is GenerationMode.POSITIVE else []:
                never_a_server_error = example(case=operation.Case(body=body, media_type="application/json"))(
                    never_a_server_error
                )
                replayed += 1
            never_a_server_error()
    assert replayed == sum(len(bodies) for bodies in FOUND.values()), "a FOUND entry names no operation"
