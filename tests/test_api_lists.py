"""The lists of the API: filters that name their choices (422 for an unknown one), one pagination
style (cursor in, next_cursor out), and execution errors that carry no quality verdict."""

import httpx
import pytest

from service.store.client import Store
from service.store.reputation import refresh_scores
from tests.conftest import FIXTURES

ENUM_FILTERS = {
    "readiness": ["ready_for_runtime", "review_recommended", "unsafe_for_production"],
    "execution_status": ["ok", "quality_failure", "execution_error"],
    "status": ["open", "finalized"],
    "primary_failure": [
        "infinite_tool_loop", "memory_degradation", "ignoring_tool_outputs", "context_pollution", "cost_explosion",
        "skill_failure", "unrecovered_error", "tool_failures",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", ENUM_FILTERS)
def test_an_unknown_choice_in_a_filter_is_a_422_naming_it(client: httpx.Client, name: str) -> None:
    response = client.get("/v1/runs", params={name: "bogus"})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    [error] = response.json()["errors"]
    assert error["field"] == f"query.{name}" and all(choice in error["message"] for choice in ENUM_FILTERS[name][:2])
    assert client.get("/v1/runs", params={name: ENUM_FILTERS[name][0]}).status_code == 200


def test_openapi_declares_the_choices(base_url: str) -> None:
    schema = httpx.get(f"{base_url}/openapi.json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/v1/runs"]["get"]["parameters"]}
    for name, choices in ENUM_FILTERS.items():
        declared = parameters[name]["schema"]
        ref = next(option["$ref"] for option in declared["anyOf"] if "$ref" in option)
        component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert component["enum"] == choices, name


def test_run_events_page_by_cursor_with_their_total(client: httpx.Client) -> None:
    events = [{"event": "decision", "n": i} for i in range(7)]
    assert client.post("/v1/runs", json={"run_id": "paged", "identity": "agent-pages"}).status_code == 201
    assert client.post("/v1/runs/paged/events", json=events).status_code == 200
    for finalized in (False, True):
        seen, cursor, pages = [], None, 0
        while True:
            page = client.get("/v1/runs/paged/events", params={"limit": 3, **({"cursor": cursor} if cursor else {})})
            body = page.json()
            assert body["total"] == 7
            seen += [event["data"]["n"] for event in body["events"]]
            pages += 1
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert seen == list(range(7)) and pages == 3, finalized
        client.post("/v1/runs/paged/finalize")
    runs_cursor = client.get("/v1/runs", params={"limit": 1}).json()["next_cursor"]
    for foreign in (runs_cursor, "bm90LWEtY3Vyc29y", "!!!"):
        refused = client.get("/v1/runs/paged/events", params={"cursor": foreign})
        assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "query.cursor", foreign


def test_the_fleet_pages_by_cursor(client: httpx.Client, embedded_store: Store) -> None:
    signals = [
        {"identity": f"agent-{i}", "category": "economic", "event_type": "paid", "score_delta": i / 10}
        for i in range(5)
    ]
    assert client.post("/v1/reputation-events", json=signals).status_code == 202
    refresh_scores(embedded_store)
    whole = client.get("/v1/identities").json()
    assert whole["next_cursor"] is None and len(whole["identities"]) == 5
    # When the fleet table was computed, in UTC (the store's DateTime comes back without its zone).
    assert whole["computed_at"].endswith("Z") and all(row["computed_at"].endswith("Z") for row in whole["identities"])
    paged, cursor = [], None
    while True:
        page = client.get("/v1/identities", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        paged += [row["identity"] for row in page["identities"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert paged == [row["identity"] for row in whole["identities"]]
    by_name = client.get("/v1/identities", params={"sort": "identity", "order": "asc"}).json()["identities"]
    assert [row["identity"] for row in by_name] == [f"agent-{i}" for i in range(5)]
    refused = client.get("/v1/identities", params={"sort": "bogus"})
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "query.sort"
    assert all(choice in refused.json()["errors"][0]["message"] for choice in ("overall", "trend_30d"))


def test_an_execution_error_has_no_quality_verdict(client: httpx.Client) -> None:
    posted = client.post("/v1/sessions", content=(FIXTURES / "session_infra_error.json").read_bytes()).json()
    assert (posted["trust_score"], posted["readiness_level"], posted["primary_failure"]) == (None, None, None)
    [listed] = client.get("/v1/runs").json()["runs"]
    assert listed["execution_status"] == "execution_error" and listed["failure_stage"] == "setup"
    assert (listed["trust_score"], listed["readiness_level"], listed["primary_failure"]) == (None, None, None)
    detail = client.get("/v1/runs/run-infra-004").json()
    assert detail["trust_score"] is None and detail["diagnosis"]["trust_score"] is not None  # kept for debugging
    for readiness in ENUM_FILTERS["readiness"]:
        assert client.get("/v1/runs", params={"readiness": readiness}).json()["runs"] == [], readiness
    errors = client.get("/v1/runs", params={"execution_status": "execution_error"}).json()["runs"]
    assert [run["run_id"] for run in errors] == ["run-infra-004"]
