"""Each kind of error to its answer (service/api/errors.py), on an app of routes that raise them, served by
uvicorn: the mapping every router relies on, including errors no route of the suite can cause on demand
(the driver's own error for a server that stops answering mid-request, a bug)."""

from collections.abc import Iterator

import clickhouse_connect
import httpx
import pytest
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from service.api import errors
from service.api.metrics import Metrics
from service.errors import Conflict, FieldError, NotFound, TooLarge
from service.testing.live import free_port, serve_in_thread


class SixFields(BaseModel):
    a: int
    b: int
    c: int
    d: int
    e: int
    f: int


def _raising_app() -> FastAPI:
    app = FastAPI()
    app.state.metrics = Metrics()
    errors.install(app)

    @app.get("/driver-unreachable")
    def driver_unreachable() -> None:
        # What clickhouse-connect raises when the ClickHouse server does not answer: OperationalError.
        clickhouse_connect.get_client(host="127.0.0.1", port=free_port(), connect_timeout=2)

    @app.get("/bug")
    def bug() -> None:
        raise KeyError("a secret detail")

    @app.get("/problem")
    def problem() -> None:
        raise errors.Problem(401, "Unauthorized", "an API key is required")

    @app.get("/http-detail")
    def http_detail() -> None:
        raise HTTPException(status_code=409, detail={"not": "text"})

    @app.get("/client/{kind}")
    def client(kind: str) -> None:
        raise {
            "missing": NotFound("run 'r'"), "conflict": Conflict("run r is finalized"),
            "large": TooLarge("too many events", field="events"), "field": FieldError("events[3].tool", "bad"),
        }[kind]  # fmt: skip

    @app.post("/body")
    def body(payload: SixFields) -> None:
        pass

    return app


@pytest.fixture(scope="module")
def raising() -> Iterator[httpx.Client]:
    with serve_in_thread(_raising_app()) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def _problem(response: httpx.Response, status: int, title: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert (body["status"], body["title"], body["instance"]) == (status, title, response.request.url.path)
    return body


def test_the_drivers_unreachable_server_error_is_a_503_with_retry_after(raising: httpx.Client) -> None:
    """Broken on purpose: the OperationalError handler removed → this test fails (a 500)."""
    response = raising.get("/driver-unreachable")
    assert _problem(response, 503, "Service Unavailable")["detail"] == errors.STORE_DOWN
    assert response.headers["retry-after"] == str(errors.RETRY_AFTER_SECONDS)


def test_a_bug_is_a_500_that_tells_nothing_of_it(raising: httpx.Client) -> None:
    # A connection of its own: after a 500 the server closes the connection (Starlette re-raises the bug
    # for the server to log), and a pooled one would fail the next request that reused it.
    body = _problem(httpx.get(f"{raising.base_url}/bug", timeout=60), 500, "Internal Server Error")
    assert body["detail"] == "unexpected error; it has been logged" and "secret" not in str(body)


def test_problems_and_http_errors(raising: httpx.Client) -> None:
    assert "errors" not in _problem(raising.get("/problem"), 401, "Unauthorized")
    assert _problem(raising.get("/http-detail"), 409, "Conflict")["detail"] == "request failed"
    assert _problem(raising.get("/no-such-route"), 404, "Not Found")["detail"] == "Not Found"
    assert _problem(raising.post("/bug"), 405, "Method Not Allowed")["detail"] == "Method Not Allowed"


def test_client_errors_name_their_field(raising: httpx.Client) -> None:
    missing = _problem(raising.get("/client/missing"), 404, "Not Found")
    assert missing["detail"] == "no run 'r'" and "errors" not in missing
    assert "errors" not in _problem(raising.get("/client/conflict"), 409, "Conflict")
    large = _problem(raising.get("/client/large"), 413, "Content Too Large")
    assert large["errors"] == [{"field": "events", "message": "too many events"}]
    field = _problem(raising.get("/client/field"), 422, "Unprocessable Content")
    assert field["detail"] == "events[3].tool: bad" and field["errors"] == [
        {"field": "events[3].tool", "message": "bad"}
    ]


def test_a_body_that_is_not_json_is_a_400_saying_where(raising: httpx.Client) -> None:
    """Broken on purpose: `_not_json` reading the position from another part of the error's location, or
    the body not given to the message → the line, column and character are wrong and this test fails."""
    bad = _problem(
        raising.post("/body", content=b'{"a": 1,\n "b": ]}', headers={"content-type": "application/json"}),
        400,
        "Bad Request",
    )
    assert bad["detail"].startswith("not JSON: ") and bad["detail"].endswith(": line 2 column 7 (char 15)")


def test_a_422_names_every_field_and_sums_up_the_first_five(raising: httpx.Client) -> None:
    body = _problem(raising.post("/body", json={}), 422, "Unprocessable Content")
    assert [e["field"] for e in body["errors"]] == list("abcdef")
    assert body["detail"] == "; ".join(f"{field}: Field required" for field in "abcde")
