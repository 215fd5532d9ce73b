"""The OpenAPI document names the errors each operation answers, as problem+json with the Problem schema
(401 and 403 where a key is needed, 404 where a thing is looked up, 409 where a run could contradict a
stored one, 400/413/415 where there is a body, 422 where there is input, 503 where the store is needed),
and what the live server answers is what the document says, status and body alike."""

import httpx
import jsonschema_rs
import orjson

from tests.conftest import FIXTURES

PROBLEM = "application/problem+json"


def _document(base_url: str) -> dict:
    return httpx.get(f"{base_url}/openapi.json").json()


def test_every_operation_documents_its_errors_as_problems(base_url: str) -> None:
    document = _document(base_url)
    assert "HTTPValidationError" not in orjson.dumps(document).decode()  # FastAPI's 422, never answered
    sessions = document["paths"]["/v1/sessions"]["post"]["responses"]
    assert {"400", "401", "403", "408", "409", "413", "415", "422", "429", "503"} <= set(sessions)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            keyed = bool(operation.get("security"))
            assert keyed == ({"401", "403", "503"} <= set(responses)), (method, path)
            if "{" in path and keyed and (method, path) != ("put", "/v1/profiles/{name}"):  # that PUT defines one
                assert "404" in responses, (method, path)
            for status, response in responses.items():
                otlp_refusal = path in ("/v1/logs", "/v1/traces") and status in ("400", "408", "413", "415", "429")
                if (status.startswith("4") and not otlp_refusal) or (status == "503" and keyed):
                    schema = response["content"][PROBLEM]["schema"]
                    assert schema == {"$ref": "#/components/schemas/Problem"}, (method, path, status)


def test_what_the_server_answers_is_documented(base_url: str, make_client, tenant: str) -> None:
    document = _document(base_url)
    problem = jsonschema_rs.validator_for(document["components"]["schemas"]["Problem"])
    writer, reader = make_client(tenant), make_client(tenant, ("read",))
    session = (FIXTURES / "session_multi.json").read_bytes()
    assert writer.post("/v1/sessions", content=session).status_code == 201
    other = {**orjson.loads(session), "identity": "agent-other"}
    answers = [
        ("post", "/v1/sessions", httpx.post(f"{base_url}/v1/sessions", content=session)),  # no key
        ("post", "/v1/sessions", reader.post("/v1/sessions", content=session)),  # no ingest scope
        ("post", "/v1/sessions", writer.post("/v1/sessions", json=other)),  # the same run_id, another agent
        ("post", "/v1/sessions", writer.post("/v1/sessions", json={"identity": "x", "events": [1]})),
        ("post", "/v1/sessions", writer.post("/v1/sessions", content=b"{not json")),
        ("post", "/v1/sessions", writer.post("/v1/sessions", content=session, headers={"content-encoding": "br"})),
        ("get", "/v1/runs/{run_id}", reader.get("/v1/runs/no-such-run")),
        ("get", "/v1/runs", reader.get("/v1/runs", params={"readiness": "bogus"})),
        ("get", "/v1/identities/{identity}/reputation", reader.get("/v1/identities/nobody/reputation")),
    ]
    statuses = [response.status_code for _, _, response in answers]
    assert statuses == [401, 403, 409, 422, 400, 415, 404, 422, 404]
    for method, path, response in answers:
        assert str(response.status_code) in document["paths"][path][method]["responses"], (method, path)
        assert response.headers["content-type"].startswith(PROBLEM)
        assert problem.is_valid(response.json()), response.text
