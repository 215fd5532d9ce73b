"""The run explorer (/ui) in a real browser: Debian's headless chromium driven by Playwright, against
the live server seeded with the shared fixtures. Every number the pages show is checked against the
API's own answer; any console error or uncaught exception fails the test. Screenshots of the run
detail and the agent health page are written to test-artifacts/ for a person to look at."""

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from service.judge import judge_log_file
from service.services import runs as run_service
from service.services.inputs import RunSpec, SessionInput
from service.services.keys import create_key
from service.store.client import Store
from service.store.reputation import refresh_scores
from tests.conftest import FIXTURES

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
SESSION_FIXTURES = ("session_clean.json", "session_loop.json", "session_multi.json", "session_infra_error.json")
DIMENSIONS = (
    "loop_control", "memory_integrity", "tool_output_utilization", "context_health", "cost_efficiency",
    "skill_adherence",
)  # fmt: skip
OTLP_SESSION = "sess-a1"

if not CHROMIUM.exists():
    pytest.skip(
        f"no chromium at {CHROMIUM}: `make test` installs Debian's chromium with apt-get when run as root; "
        "here it is missing and could not be installed",
        allow_module_level=True,
    )


# --- seeding --------------------------------------------------------------------------------------


@dataclass
class Tenant:
    name: str
    key: str
    api: httpx.Client


def _tenant(base_url: str, store: Store) -> Tenant:
    name = f"t_ui_{uuid.uuid4().hex[:10]}"
    key = create_key(store, name, ["read", "ingest"], "ui tests", datetime.now(UTC)).key
    return Tenant(name, key, httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120))


def _seed_otlp_session(store: Store, tenant: str) -> None:
    """An OpenTelemetry session with its performance score, scored by the judge from the shared log."""
    score = judge_log_file(FIXTURES / "otlp_claude_code.jsonl", OTLP_SESSION, workers=1).score
    spec = RunSpec(identity="agent-codesmith", run_id=OTLP_SESSION, kind="session")
    events = [
        {"event": "tool_call", "timestamp": "2026-11-20T13:00:00Z", "tool": "Read", "args": {"file_path": "a.py"}},
        {"event": "tool_output", "timestamp": "2026-11-20T13:00:01Z", "tool": "Read", "status": "ok"},
    ]
    session = SessionInput(spec, events, session_performance=score.to_dict())
    run_service.ingest_sessions(store, tenant, [session], datetime.now(UTC), 0.8)


def _unsafe_runs_now(count: int) -> list[dict[str, Any]]:
    """The loop fixture without timestamps (so run at the finalize time): enough of them make the
    unsafe-share alert fire."""
    loop = json.loads((FIXTURES / "session_loop.json").read_text())
    events = [{k: v for k, v in event.items() if k != "timestamp"} for event in loop["events"]]
    return [{"run_id": f"run-hasty-{i}", "identity": "agent-hasty", "events": events} for i in range(count)]


@pytest.fixture(scope="module")
def seeded(base_url: str, embedded_store: Store) -> Iterator[Tenant]:
    """A tenant holding the four fixture runs (posted through the API), one OTLP session, and five
    unsafe runs of today that fire an alert."""
    tenant = _tenant(base_url, embedded_store)
    for name in SESSION_FIXTURES:
        response = tenant.api.post("/v1/sessions", content=(FIXTURES / name).read_bytes())
        assert response.status_code == 201, response.text
    assert tenant.api.post("/v1/sessions/batch", json=_unsafe_runs_now(5)).status_code == 201
    _seed_otlp_session(embedded_store, tenant.name)
    refresh_scores(embedded_store)
    yield tenant
    tenant.api.close()


# --- the browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS)
        yield browser
        browser.close()


@dataclass
class Explorer:
    """One browser tab on /ui, with every console error and API request it saw."""

    page: Page
    base_url: str
    errors: list[str] = field(default_factory=list)
    api_requests: list[str] = field(default_factory=list)

    def wait_ready(self, route: str) -> None:
        """Waits until the page for `route` (a hash) has rendered every section."""
        self.page.wait_for_function(
            "route => document.querySelector('main').dataset.route === route"
            " && document.querySelector('main').dataset.state === 'ready'",
            arg=route,
        )

    def open(self, route: str) -> None:
        self.api_requests.clear()
        self.page.goto(f"{self.base_url}/ui/{route}")
        self.wait_ready(route)

    def follow(self, link: Locator) -> None:
        """Clicks a link to another page of the explorer and waits for that page."""
        route = link.get_attribute("href")
        self.api_requests.clear()
        link.click()
        self.wait_ready(route)

    def field(self, name: str, within: str = "main") -> str:
        return self.page.locator(f'{within} [data-field="{name}"]').first.inner_text().strip()

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def _explorer(browser: Browser, base_url: str, key: str | None) -> Explorer:
    """A new browser context (its own localStorage), holding `key` as if the user had pasted it."""
    stored = [{"name": "repute.apiKey", "value": key}] if key is not None else []
    storage = {"cookies": [], "origins": [{"origin": base_url, "localStorage": stored}]}
    page = browser.new_context(viewport={"width": 1280, "height": 900}, storage_state=storage).new_page()
    explorer = Explorer(page, base_url)
    page.on("console", lambda message: message.type == "error" and explorer.errors.append(message.text))
    page.on("pageerror", lambda error: explorer.errors.append(f"uncaught: {error}"))
    page.on("request", lambda request: "/v1/" in request.url and explorer.api_requests.append(request.url))
    return explorer


@pytest.fixture
def explorer(browser: Browser, base_url: str, seeded: Tenant) -> Iterator[Explorer]:
    """A tab that already holds the seeded tenant's key; fails the test on any console error."""
    explorer = _explorer(browser, base_url, seeded.key)
    yield explorer
    explorer.page.context.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def _paths(urls: list[str]) -> set[str]:
    return {httpx.URL(url).path for url in urls}


def _float(text: str) -> float:
    """A number as the page shows it; scores shown with one decimal match the API's within 0.05."""
    return float(text.replace("+", ""))


# --- tests ----------------------------------------------------------------------------------------


def test_the_ui_is_static_and_served_without_a_key(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as anonymous:
        assert anonymous.get("/ui").headers["location"].endswith("/ui/")
        page = anonymous.get("/ui/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        script = anonymous.get("/ui/pages/run.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert anonymous.get("/v1/runs").status_code == 401


def test_the_key_is_asked_once_then_runs_to_run_to_identity(browser: Browser, base_url: str, seeded: Tenant) -> None:
    explorer = _explorer(browser, base_url, key=None)
    page = explorer.page
    explorer.open("#/runs")
    page.get_by_label("API key").fill(seeded.key)
    page.get_by_role("button", name="Save key").click()
    explorer.wait_ready("#/runs")

    listed = seeded.api.get("/v1/runs").json()["runs"]
    rows = page.locator("table.runs tbody tr")
    assert rows.evaluate_all("rows => rows.map(row => row.dataset.runId)") == [run["run_id"] for run in listed]
    shown_trust = page.locator('table.runs tbody [data-field="trust"]').all_inner_texts()
    assert shown_trust == ["—" if run["trust_score"] is None else str(run["trust_score"]) for run in listed]

    explorer.follow(page.get_by_role("link", name="run-multi-003", exact=True))
    run = seeded.api.get("/v1/runs/run-multi-003").json()
    assert explorer.field("trust") == str(run["trust_score"]) == "89"
    assert explorer.field("readiness") == run["readiness_level"].replace("_", " ")
    assert explorer.field("primary-failure").startswith(run["primary_failure"].replace("_", " "))
    for dimension in DIMENSIONS:
        assert explorer.field(f"score-{dimension}") == str(run["diagnosis"]["scores"][dimension]), dimension
    assert explorer.field("execution-status") == "ok"
    assert explorer.field("event-count") == str(run["event_count"])
    assert _paths(explorer.api_requests) == {"/v1/runs/run-multi-003", "/v1/runs/run-multi-003/events"}

    causes = run["diagnosis"]["failure_causes"]
    primary = next(cause for cause in causes if cause["type"] == run["primary_failure"])
    steps = page.locator("ol.chain li").all_inner_texts()
    assert steps == [step.replace("_", " ") for step in primary["causal_chain"].split(" -> ")]
    assert page.locator(".remediation-primary").inner_text().endswith(primary["remediation"])

    events = seeded.api.get("/v1/runs/run-multi-003/events").json()["events"]
    event_rows = page.locator("table.events tbody tr")
    assert event_rows.count() == len(events)
    evidence = {event_id for cause in causes for event_id in cause["evidence"]}
    highlighted = page.locator("table.events tbody tr.evidence").evaluate_all("rows => rows.map(row => row.id)")
    assert sorted(highlighted) == sorted(f"event-row-{event_id}" for event_id in evidence)

    graph = run["diagnosis"]["causal_graph"]
    assert page.locator("svg.causal-graph .graph-failure").count() == len(causes)
    assert page.locator("svg.causal-graph .graph-event").count() == len(events)
    for kind in ("causes", "reinforces"):
        drawn = page.locator(f"svg.causal-graph .graph-{kind}").count()
        assert drawn == sum(edge["type"] == kind for edge in graph["edges"]), kind
    explorer.screenshot("ui-run-detail.png")

    explorer.follow(page.locator("a.identity-link"))
    report = seeded.api.get(f"/v1/identities/{run['identity']}/reputation").json()
    assert report["overall"] is not None
    assert abs(_float(explorer.field("overall")) - report["overall"]) <= 0.05
    assert explorer.field("confidence") == f"{round(100 * report['confidence'])}%"
    for trend in ("trend_7d", "trend_30d"):
        shown = explorer.field(trend)
        assert shown == "—" if report[trend] is None else abs(_float(shown) - report[trend]) <= 0.05, trend
    for failure, count in report["failures"].items():
        assert explorer.field(f"failures-{failure}") == str(count), failure
    identity_runs = seeded.api.get("/v1/runs", params={"identity": run["identity"]}).json()["runs"]
    quality = [r for r in identity_runs if r["trust_score"] is not None and r["execution_status"] != "execution_error"]
    assert page.locator("svg.trust-chart .trust-point").count() == len(quality)
    assert "1 execution error left out" in page.locator("main").inner_text()
    explorer.screenshot("ui-agent-health.png")

    page.context.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def test_filters_narrow_the_list_like_the_api(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/runs")
    page = explorer.page
    page.get_by_label("Readiness").select_option("unsafe_for_production")
    page.get_by_label("From (UTC day)").fill("2026-11-20")
    page.get_by_label("To (UTC day, included)").fill("2026-11-20")
    page.get_by_role("button", name="Apply filters").click()
    explorer.wait_ready("#/runs?readiness=unsafe_for_production&from=2026-11-20&to=2026-11-20")
    expected = seeded.api.get(
        "/v1/runs",
        params={"readiness": "unsafe_for_production", "since": "2026-11-20T00:00:00Z", "until": "2026-11-21T00:00:00Z"},
    ).json()["runs"]
    shown = page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(row => row.dataset.runId)")
    assert shown == [run["run_id"] for run in expected] and shown

    explorer.open("#/runs?execution_status=execution_error")
    assert page.get_by_label("Execution status").input_value() == "execution_error"
    shown = page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(row => row.dataset.runId)")
    assert shown == ["run-infra-004"]


def test_pages_follow_the_api_cursor(browser: Browser, base_url: str, embedded_store: Store) -> None:
    tenant = _tenant(base_url, embedded_store)
    runs = [
        {"run_id": f"page-{i:03d}", "identity": "agent-pager", "events": [{"event": "decision"}]} for i in range(57)
    ]
    assert tenant.api.post("/v1/sessions/batch", json=runs).status_code == 201
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open("#/runs?identity=agent-pager")
    first = explorer.page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(row => row.dataset.runId)")
    explorer.follow(explorer.page.get_by_role("link", name="Older runs"))
    second = explorer.page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(row => row.dataset.runId)")
    api_first = tenant.api.get("/v1/runs", params={"identity": "agent-pager"}).json()
    api_second = tenant.api.get(
        "/v1/runs", params={"identity": "agent-pager", "cursor": api_first["next_cursor"]}
    ).json()
    assert first == [run["run_id"] for run in api_first["runs"]] and len(first) == 50
    assert second == [run["run_id"] for run in api_second["runs"]] and len(second) == 7
    assert explorer.page.get_by_role("link", name="Older runs").count() == 0
    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def test_execution_outcome_and_session_performance(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/runs/run-infra-004")
    run = seeded.api.get("/v1/runs/run-infra-004").json()
    assert explorer.field("execution-status") == run["execution_status"].replace("_", " ") == "execution error"
    assert explorer.field("failure-stage") == run["failure_stage"] == "setup"
    assert explorer.field("failure-reason-code") == run["failure_reason_code"] == "toolchain_missing"

    explorer.open(f"#/runs/{OTLP_SESSION}")
    performance = seeded.api.get(f"/v1/runs/{OTLP_SESSION}").json()["session_performance"]
    assert _float(explorer.field("composite")) == float(performance["composite"])
    for name, value in performance["dimensions"].items():
        assert _float(explorer.field(f"performance-{name}")) == float(value), name
    for name, value in performance["stats"].items():
        assert _float(explorer.field(f"performance-{name}").replace(",", "")) == float(value), name


def test_an_open_run_shows_its_events_before_any_diagnosis(explorer: Explorer, seeded: Tenant) -> None:
    run_id = f"run-open-{uuid.uuid4().hex[:8]}"
    assert seeded.api.post("/v1/runs", json={"run_id": run_id, "identity": "agent-atlas"}).status_code == 201
    events = [{"event": "tool_call", "tool": "search", "args": {"q": "<b>not markup</b>"}}, {"event": "decision"}]
    assert seeded.api.post(f"/v1/runs/{run_id}/events", json=events).status_code == 200
    explorer.open(f"#/runs/{run_id}")
    page = explorer.page
    assert explorer.field("execution-status") == "open"
    assert "still open" in page.locator("main").inner_text()
    assert page.locator("table.events tbody tr").count() == 2
    assert page.locator("table.events b").count() == 0  # event text is shown as text, never as markup
    assert "<b>not markup</b>" in page.locator("table.events").inner_text()


def test_fleet_lists_identities_by_reputation_with_alerts(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/fleet")
    page = explorer.page
    fleet = seeded.api.get("/v1/identities", params={"sort": "overall", "order": "desc"}).json()["identities"]
    shown = page.locator("table.fleet tbody tr").evaluate_all("rows => rows.map(row => row.dataset.identity)")
    assert shown == [row["identity"] for row in fleet] and len(shown) == 4
    for row in fleet:
        cells = f'table.fleet tr[data-identity="{row["identity"]}"]'
        assert abs(_float(explorer.field("overall", cells)) - row["overall"]) <= 0.05
        assert explorer.field("confidence", cells) == f"{round(100 * row['confidence'])}%"
    alerts = seeded.api.get("/v1/alerts").json()["alerts"]
    assert "unsafe_share" in {alert["alert"] for alert in alerts}
    shown_alerts = page.locator("ul.alerts li .message").all_inner_texts()
    assert shown_alerts == [alert["message"] for alert in alerts]
    assert _paths(explorer.api_requests) == {"/v1/identities", "/v1/alerts"}


def test_keyboard_reaches_a_run_and_its_evidence(explorer: Explorer) -> None:
    explorer.open("#/runs")
    page = explorer.page
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('run-link')"):
            break
    else:
        pytest.fail("Tab never reached a run link")
    route = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("Enter")
    explorer.wait_ready(route)
    assert page.evaluate("document.activeElement.tagName") == "H1"

    explorer.open("#/runs/run-loop-002")
    evidence_button = page.locator(".evidence-links button").first
    evidence_button.focus()
    page.keyboard.press("Enter")
    focused = page.evaluate("document.activeElement.id")
    assert focused == f"event-row-{evidence_button.inner_text()}"


def test_a_rejected_key_says_so_and_offers_another(browser: Browser, base_url: str) -> None:
    explorer = _explorer(browser, base_url, key="not-a-key")
    explorer.open("#/fleet")
    assert "API key was not accepted" in explorer.page.locator("main").inner_text()
    explorer.page.get_by_role("button", name="Enter another API key").first.click()
    expect(explorer.page.get_by_label("API key")).to_be_visible()
    explorer.page.context.close()
