"""Every number a write route takes, at its boundaries: a 422 naming the field, or a stored value equal
to what was sent (issue #32: `trial` 2^32 passed the parser and broke the insert with a 500).

The numeric fields are read from the live OpenAPI schema, so a field added to a route's model is walked
without a change here; the run events' numbers (free-form objects in the schema) are listed by hand.
Each value is sent alone in an otherwise valid body. JSON cannot hold NaN: the literal is a 400 for the
body as a whole, the string "NaN" a 422 naming the field.
"""

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import orjson
import pytest

from service.store.client import Store

BOUNDARIES: tuple[Any, ...] = (2**31, 2**32, 2**63, 2**64, -1, 1e308, -1e308, "NaN")
NAN_LITERAL = b"NaN"
REFUSED, EITHER = object(), object()


@dataclass(frozen=True)
class NumberField:
    route: str  # "POST /v1/sessions"
    path: tuple[str | int, ...]  # inside the body
    integer: bool
    minimum: float | None
    maximum: float | None
    text: Any = REFUSED  # what a string stores

    @property
    def name(self) -> str:
        return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in self.path).lstrip(".")

    def values(self) -> list[Any]:
        edges = [self.minimum, self.maximum]
        beyond = [None if edge is None else edge + step for edge, step in zip(edges, (-1, 1), strict=True)]
        return [value for value in [*edges, *beyond, *BOUNDARIES] if value is not None]

    def expected(self, value: Any) -> Any:
        """What the field stores for `value`: REFUSED (a 422 naming it), or EITHER for a time (epoch
        numbers are read by magnitude, so the reading decides), else the value itself."""
        if isinstance(value, str):
            return self.text
        if self.path[-1] == "timestamp":
            return EITHER
        if self.integer and (isinstance(value, float) or not -(2**63) <= value < 2**64):
            return REFUSED  # orjson reads an integer beyond 64 bits as a float
        low = self.minimum if self.minimum is not None else float("-inf")
        high = self.maximum if self.maximum is not None else float("inf")
        return value if low <= value <= high else REFUSED


# --- the fields, from the schema ------------------------------------------------------------------


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _numbers(schema: dict[str, Any], document: dict[str, Any], path: tuple[str | int, ...]) -> Iterator[tuple]:
    schema = _resolve(schema, document)
    for choice in schema.get("anyOf", []) + schema.get("oneOf", []):
        resolved = _resolve(choice, document)
        if resolved.get("type") == "object" or resolved.get("type") in ("integer", "number"):
            yield from _numbers(resolved, document, path)
            return
    if schema.get("type") in ("integer", "number"):
        yield path, schema["type"] == "integer", schema.get("minimum"), schema.get("maximum")
    for name, child in schema.get("properties", {}).items():
        yield from _numbers(child, document, (*path, name))
    if schema.get("type") == "array" and path and path[-1] in ARRAYS:
        yield from _numbers(schema["items"], document, (*path, 0))


ARRAYS = ("sessions", "events")  # arrays whose first item the walk enters


def schema_fields(document: dict[str, Any]) -> list[NumberField]:
    fields = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            for inner, integer, low, high in _numbers(content["schema"], document, ()):
                fields.append(NumberField(f"{method.upper()} {path}", inner, integer, low, high))
    return fields


# Numbers inside run events: the schema leaves events free-form (SPEC §3.1), so they are named here with
# what a string gives: a token count that is not a number counts 0 (SPEC §4).
EVENT_NUMBERS = (("total_tokens", 0, 10**12, 0), ("tokens", 0, 10**12, 0), ("timestamp", None, None, REFUSED))


# --- the routes: a valid body, and where the value is read back -------------------------------------


@dataclass
class Route:
    url: str
    body: dict[str, Any]
    read_back: Callable[[], Any]


def _run_value(client: httpx.Client, run_id: str, path: tuple[str | int, ...]) -> Any:
    run = client.get(f"/v1/runs/{run_id}").json()
    if path[-1] == "score":
        return run["score"]
    if path[-1] == "timestamp":
        return run["started_at"]
    if path[-1] in ("total_tokens", "tokens"):
        return run["total_tokens"]
    return run[str(path[-1])]


def _finalized_value(client: httpx.Client, run_id: str, path: tuple[str | int, ...]) -> Any:
    client.post(f"/v1/runs/{run_id}/finalize").raise_for_status()
    return _run_value(client, run_id, path)


def _session(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "identity": "agent-bounds", "events": [{"event": "token_usage"}]}


def route_for(
    name: str, path: tuple[str | int, ...], client: httpx.Client, store: Store, tenant: str, key_id: str
) -> Route:
    run_id = f"bounds-{uuid.uuid4().hex}"
    if name == "POST /v1/sessions":
        return Route("/v1/sessions", _session(run_id), partial(_run_value, client, run_id, path))
    if name == "POST /v1/sessions/batch":
        body = {"sessions": [_session(run_id), _session(f"{run_id}-2")]}
        return Route("/v1/sessions/batch", body, partial(_run_value, client, run_id, path))
    if name == "POST /v1/runs":
        body = {"run_id": run_id, "identity": "agent-bounds"}
        return Route("/v1/runs", body, partial(_run_value, client, run_id, path))
    if name == "POST /v1/runs/{run_id}/finalize":
        client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-bounds"}).raise_for_status()
        return Route(f"/v1/runs/{run_id}/finalize", {"execution": {}}, partial(_run_value, client, run_id, path))
    if name == "POST /v1/reputation-events":
        identity = f"agent-{uuid.uuid4().hex[:8]}"
        signal = {"identity": identity, "category": "economic", "event_type": "payment_completed", "score_delta": 1}
        return Route(
            "/v1/reputation-events", {"events": [signal]}, partial(_signal_value, store, tenant, identity, path)
        )
    if name == "PUT /v1/sources/{key_id}":
        return Route(f"/v1/sources/{key_id}", {"credibility": 1}, partial(_source_value, client, key_id))
    if name == "PUT /v1/profiles/{name}":
        # tokens_high at its least and tokens_critical at its most, so that each walks its whole range.
        body = {"tokens_high": 1, "tokens_critical": 10**15, "tokens_per_point": 1, "duplicates": 1}
        return Route("/v1/profiles/bounds", body, partial(_profile_value, client, path))
    raise AssertionError(f"{name} takes a number and has no route here: add it")


def _signal_value(store: Store, tenant: str, identity: str, path: tuple[str | int, ...]) -> Any:
    row = store.client.query(
        "SELECT score_delta, confidence, weight FROM reputation_events"
        " WHERE tenant = {t:String} AND identity = {i:String}",
        parameters={"t": tenant, "i": identity},
    ).named_results()
    return next(row)[str(path[-1])]


def _profile_value(client: httpx.Client, path: tuple[str | int, ...]) -> Any:
    return next(p for p in client.get("/v1/profiles").json()["profiles"] if p["name"] == "bounds")[str(path[-1])]


def _source_value(client: httpx.Client, key_id: str) -> Any:
    return next(s["credibility"] for s in client.get("/v1/sources").json()["sources"] if s["source"] == key_id)


def _with(body: Any, path: tuple[str | int, ...], value: Any) -> Any:
    copy = orjson.loads(orjson.dumps(body))
    holder = copy
    for part in path[:-1]:
        holder = holder.setdefault(part, {}) if isinstance(holder, dict) else holder[part]
    holder[path[-1]] = value
    return copy


def _send(
    client: httpx.Client, method: str, url: str, body: Any, path: tuple[str | int, ...], value: Any
) -> httpx.Response:
    """The body with `value` at `path`, as JSON text: NaN and integers beyond 64 bits written as the
    literals a client may send (orjson writes neither)."""
    if value is NAN_LITERAL or (isinstance(value, int) and not -(2**63) <= value < 2**64):
        literal = NAN_LITERAL if value is NAN_LITERAL else str(value).encode()
        content = orjson.dumps(_with(body, path, "@@")).replace(b'"@@"', literal)
    else:
        content = orjson.dumps(_with(body, path, value))
    return client.request(method, url, content=content, headers={"Content-Type": "application/json"})


# --- the walk ----------------------------------------------------------------------------------------


def _walked(client: httpx.Client) -> list[NumberField]:
    document = client.get("/openapi.json").json()
    fields = schema_fields(document)
    for route in ("POST /v1/sessions", "POST /v1/runs/{run_id}/events"):
        fields += [NumberField(route, ("events", 0, name), True, *bounds) for name, *bounds in EVENT_NUMBERS]
    return fields


def test_the_walk_covers_every_number_the_issue_names(client: httpx.Client) -> None:
    names = {(field.route, field.name) for field in _walked(client)}
    for expected in [
        ("POST /v1/sessions", "trial"), ("POST /v1/sessions", "execution.score"),
        ("POST /v1/sessions/batch", "sessions[0].trial"), ("POST /v1/runs", "trial"),
        ("POST /v1/runs/{run_id}/finalize", "execution.score"), ("POST /v1/reputation-events", "events[0].weight"),
        ("POST /v1/reputation-events", "events[0].confidence"), ("POST /v1/reputation-events", "events[0].score_delta"),
        ("PUT /v1/sources/{key_id}", "credibility"), ("POST /v1/sessions", "events[0].total_tokens"),
        ("PUT /v1/profiles/{name}", "tokens_high"), ("PUT /v1/profiles/{name}", "duplicates"),
    ]:  # fmt: skip
        assert expected in names, expected


def test_every_number_at_its_boundaries_is_refused_by_name_or_stored(
    client: httpx.Client, embedded_store: Store, tenant: str
) -> None:
    key_id = client.post("/v1/keys", json={"tenant": tenant, "scopes": ["ingest"]}).json()["id"]
    walked = [field for field in _walked(client) if field.route != "POST /v1/runs/{run_id}/events"]
    for field in walked:
        for value in [*field.values(), NAN_LITERAL]:
            route = route_for(field.route, field.path, client, embedded_store, tenant, key_id)
            response = _send(client, field.route.split()[0], route.url, route.body, field.path, value)
            if value is NAN_LITERAL:
                assert response.status_code == 400, f"{field.route} {field.name}=NaN: {response.text[:300]}"
                continue
            check_answer(field, value, response, route.read_back)


def check_answer(field: NumberField, value: Any, response: httpx.Response, read_back: Callable[[], Any]) -> None:
    """A 422 naming the field, or a stored value equal to what the field stores for `value`."""
    where = f"{field.route} {field.name}={value!r}"
    expected = field.expected(value)
    if response.is_success:
        assert expected is not REFUSED, f"{where} was accepted"
        stored = read_back()
        assert stored is not None if expected is EITHER else stored == expected, f"{where}: stored {stored!r}"
    else:
        assert response.status_code == 422, f"{where}: {response.status_code} {response.text[:300]}"
        assert expected in (REFUSED, EITHER), f"{where} was refused: {response.text[:300]}"
        named = [error["field"] for error in response.json()["errors"]]
        assert field.name in named, f"{where}: {named}"


@pytest.mark.parametrize("name,low,high,text", EVENT_NUMBERS)
def test_appended_event_numbers_are_refused_by_name_or_stored(client: httpx.Client, name: str, low, high, text) -> None:
    field = NumberField("POST /v1/runs/{run_id}/events", ("events", 0, name), True, low, high, text)
    for value in field.values():
        run_id = f"bounds-{uuid.uuid4().hex}"
        client.post("/v1/runs", json={"run_id": run_id, "identity": "agent-bounds"}).raise_for_status()
        body = {"events": [{"event": "token_usage"}]}
        response = _send(client, "POST", f"/v1/runs/{run_id}/events", body, field.path, value)
        check_answer(field, value, response, partial(_finalized_value, client, run_id, field.path))
