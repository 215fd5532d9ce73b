"""The run explorer (/ui) in a real browser: Debian's headless chromium driven by Playwright, against
the live server seeded with the fixtures of tests/data. Every number the pages show is checked against the
API's own answer; any console error or uncaught exception fails the test. Screenshots of the run
detail and the agent health page are written to test-artifacts/ for a person to look at."""

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from service.judge import judge_log_file
from service.model import RunHeader, RunMaterial
from service.services.keys import create_key
from service.services.receivers.whole import ingest_sessions
from service.store.client import Store
from service.store.reputation import refresh_scores
from tests.conftest import FIXTURES
from tests.traces_support import MS, T0, otlp_json, proto_span, request_of

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
TRACED_AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "agent-traced"}
FAILING_SEARCH = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "search",
    "gen_ai.tool.call.arguments": json.dumps({"query": "flights to Lisbon"}),
}
SEARCHES = 5
EXPLAINED = "agent-explained"

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
    """An OpenTelemetry session with its performance score, scored by the judge from the fixture log."""
    score = judge_log_file(FIXTURES / "otlp_claude_code.jsonl", OTLP_SESSION, workers=1).score
    spec = RunHeader(identity="agent-codesmith", run_id=OTLP_SESSION, kind="session")
    events = [
        {"event": "tool_call", "timestamp": "2026-11-20T13:00:00Z", "tool": "Read", "args": {"file_path": "a.py"}},
        {"event": "tool_output", "timestamp": "2026-11-20T13:00:01Z", "tool": "Read", "status": "ok"},
    ]
    session = RunMaterial.from_events(spec, events, session_performance=score.to_dict())
    ingest_sessions(store, tenant, [session], datetime.now(UTC), 0.8)


def _unsafe_runs_now(count: int) -> list[dict[str, Any]]:
    """The loop fixture without timestamps (so run at the finalize time): enough of them make the
    unsafe-share alert fire."""
    loop = json.loads((FIXTURES / "session_loop.json").read_text())
    events = [{k: v for k, v in event.items() if k != "timestamp"} for event in loop["events"]]
    return [{"run_id": f"run-hasty-{i}", "identity": "agent-hasty", "events": events} for i in range(count)]


def _run_at(fixture: str, run_id: str, start: datetime) -> dict[str, Any]:
    """A fixture's events as a run of EXPLAINED that starts at `start`, the events as far apart as before."""
    events = json.loads((FIXTURES / fixture).read_text())["events"]
    shift = start - datetime.fromisoformat(events[0]["timestamp"])
    moved = [{**e, "timestamp": (datetime.fromisoformat(e["timestamp"]) + shift).isoformat()} for e in events]
    return {"run_id": run_id, "identity": EXPLAINED, "events": moved}


def _seed_explained_agent(api: httpx.Client, importer: httpx.Client) -> None:
    """EXPLAINED over the last 10 days: a clean run and two completed payments 10 days ago (imported by an
    admin key: older than REPUTE_SIGNAL_MAX_AGE_DAYS); today an unsafe run and 101 failed payments of one
    invoice, the last over the daily cap of the key's source. No identity hygiene events at all. Today's run
    ends a minute before now: a run still going on at midnight would belong to tomorrow, after the explanation's
    as_of."""
    now = datetime.now(UTC)
    long_ago = now - timedelta(days=10)
    runs = [
        _run_at("session_clean.json", "run-explained-clean", long_ago),
        _run_at("session_loop.json", "run-explained-loop", now - timedelta(minutes=1)),
    ]
    assert api.post("/v1/sessions/batch", json=runs).status_code == 201
    paid = [
        {"identity": EXPLAINED, "category": "economic", "event_type": "payment_completed", "score_delta": 1,
         "timestamp": long_ago.isoformat(), "reference_type": "transaction", "reference_id": f"tx-{n}"}
        for n in range(2)
    ]  # fmt: skip
    failed = [
        {"identity": EXPLAINED, "category": "economic", "event_type": "payment_failed", "score_delta": -1,
         "event_id": str(uuid.uuid4()), "reference_type": "invoice", "reference_id": "inv-7"}
        for _ in range(101)
    ]  # fmt: skip
    assert importer.post("/v1/reputation-events", json=paid).status_code == 202
    answer = api.post("/v1/reputation-events", json=failed)
    assert answer.status_code == 202 and answer.json()["capped"] == 1, answer.text


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


def _trace_born_run(api: httpx.Client) -> str:
    """An agent's trace posted as OTLP/JSON and finalized: the same search five times, each failing, so
    every search span gives several events (tool_call, tool_output, error_event) sharing its span id.
    Returns the run id, which is the trace id."""
    trace_id = uuid.uuid4().bytes
    root = proto_span(1, trace_id=trace_id, name="invoke_agent", end=T0 + (SEARCHES + 2) * MS, attributes=TRACED_AGENT)
    searches = [
        proto_span(n, trace_id=trace_id, parent=1, name="execute_tool search", start=T0 + n * MS,
                   attributes=FAILING_SEARCH, error=True, message="search timed out")
        for n in range(2, SEARCHES + 2)
    ]  # fmt: skip
    assert api.post("/v1/traces", json=otlp_json(request_of(root, *searches))).status_code == 200
    assert api.post(f"/v1/runs/{trace_id.hex()}/finalize").status_code == 200
    return trace_id.hex()


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


def test_an_execution_error_leads_with_its_cause_and_shows_no_verdict(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/runs/run-infra-004")
    page = explorer.page
    run = seeded.api.get("/v1/runs/run-infra-004").json()
    assert run["execution_status"] == "execution_error" and run["trust_score"] is None
    headings = page.locator("main section h2").all_inner_texts()
    assert headings[0] == "Execution error"
    assert not {"Executive summary", "Dimension scores", "Failures", "Causal graph", "Session performance"} & set(
        headings
    )
    assert explorer.field("execution-status") == "execution error · setup / toolchain_missing"
    assert explorer.field("failure-stage") == run["failure_stage"] == "setup"
    assert explorer.field("failure-reason-code") == run["failure_reason_code"] == "toolchain_missing"
    assert explorer.field("failure-message") == run["failure_message"] == "dotnet: command not found"
    assert explorer.field("trust") == "none: no quality verdict"
    assert page.locator(".trust-big").count() == 0 and page.locator("table.events tbody tr").count() == 3
    explorer.screenshot("ui-execution-error.png")

    explorer.open("#/runs")
    row = page.locator('table.runs tr[data-run-id="run-infra-004"]')
    assert row.locator('[data-field="trust"]').inner_text() == "—"
    assert row.locator('[data-field="execution-error"]').inner_text() == "execution error · setup / toolchain_missing"


def test_only_a_session_has_a_performance_card(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/runs/run-multi-003")
    assert "Session performance" not in explorer.page.locator("main section h2").all_inner_texts()

    explorer.open(f"#/runs/{OTLP_SESSION}")
    performance = seeded.api.get(f"/v1/runs/{OTLP_SESSION}").json()["session_performance"]
    assert _float(explorer.field("composite")) == float(performance["composite"])
    for name, value in performance["dimensions"].items():
        assert _float(explorer.field(f"performance-{name}")) == float(value), name
    for name, value in performance["stats"].items():
        assert _float(explorer.field(f"performance-{name}").replace(",", "")) == float(value), name


def test_the_run_page_names_the_profile_that_judged_it(explorer: Explorer, seeded: Tenant) -> None:
    """A posted run under agent (the default of posted runs since SPEC §4.2; before, critiqor) and an OTLP
    session under long-session: one line each, the profile and its thresholds as the API gives them."""
    for run_id, name in (("run-multi-003", "agent"), (OTLP_SESSION, "long-session")):
        profile = seeded.api.get(f"/v1/runs/{run_id}").json()["profile"]
        assert profile["name"] == name
        explorer.open(f"#/runs/{run_id}")
        assert explorer.field("profile") == (
            f"{name}: cost explosion from {profile['tokens_high']:,} tokens (critical from"
            f" {profile['tokens_critical']:,}, one impact point per {profile['tokens_per_point']:,}) or"
            f" {profile['duplicates']} duplicate calls"
        )


def test_an_open_run_shows_its_events_before_any_diagnosis(explorer: Explorer, seeded: Tenant) -> None:
    run_id = f"run-open-{uuid.uuid4().hex[:8]}"
    assert seeded.api.post("/v1/runs", json={"run_id": run_id, "identity": "agent-atlas"}).status_code == 201
    events = [{"event": "tool_call", "tool": "search", "args": {"q": "<b>not markup</b>"}}, {"event": "decision"}]
    assert seeded.api.post(f"/v1/runs/{run_id}/events", json=events).status_code == 200
    explorer.open(f"#/runs/{run_id}")
    page = explorer.page
    assert explorer.field("execution-status") == "open"
    assert page.locator("main").inner_text().count("still open") == 1
    assert page.locator("table.events tbody tr").count() == 2
    assert page.locator("table.events b").count() == 0  # event text is shown as text, never as markup
    assert "<b>not markup</b>" in page.locator("table.events").inner_text()


def test_a_trace_born_run_lists_its_events_by_span_id(browser: Browser, base_url: str, embedded_store: Store) -> None:
    tenant = _tenant(base_url, embedded_store)
    run_id = _trace_born_run(tenant.api)
    run = tenant.api.get(f"/v1/runs/{run_id}").json()
    events = tenant.api.get(f"/v1/runs/{run_id}/events").json()["events"]
    assert run["kind"] == "trace" and all(event["event_id"] == event["data"]["span_id"] for event in events)
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open(f"#/runs/{run_id}")
    page = explorer.page

    assert page.locator("table.events thead th").nth(1).inner_text() == "Span id"
    shown_ids = page.locator("table.events tbody tr td:nth-child(2)").all_inner_texts()
    assert shown_ids == [event["data"]["span_id"] for event in events] and len(set(shown_ids)) < len(shown_ids)
    assert "span_id" not in page.locator("table.events").inner_text()  # said once, in its column
    # a span's later events are not evidence because its first one is: only the diagnosis's own events are
    evidence = {node_id for cause in run["diagnosis"]["failure_causes"] for node_id in cause["evidence"]}
    highlighted = page.locator("table.events tbody tr.evidence").evaluate_all("rows => rows.map(row => row.id)")
    assert sorted(highlighted) == sorted(f"event-row-{node_id}" for node_id in evidence) and evidence
    row_ids = page.locator("table.events tbody tr[id]").evaluate_all("rows => rows.map(row => row.id)")
    assert len(set(row_ids)) == len(row_ids) == len(events)
    explorer.screenshot("ui-trace-run.png")

    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def _contribution(window: dict[str, Any]) -> float:
    """The points an event type adds to its category's neutral 50: share × (score − 50)."""
    return 0.0 if window["score"] is None else window["share"] * (window["score"] - 50)


def _signed(points: float) -> str:
    """As the page signs a number of points: +19.6, -30.4, and 0.0 with no sign."""
    text = f"{points:+.1f}"
    return "0.0" if float(text) == 0 else text


def test_the_agent_page_explains_what_moved_the_score(browser: Browser, base_url: str, embedded_store: Store) -> None:
    tenant = _tenant(base_url, embedded_store)
    admin = create_key(embedded_store, tenant.name, ["ingest", "admin"], "ui import", datetime.now(UTC)).key
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {admin}"}, timeout=120) as importer:
        _seed_explained_agent(tenant.api, importer)
    explanation = tenant.api.get(f"/v1/identities/{EXPLAINED}/reputation/explain").json()
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open(f"#/identities/{EXPLAINED}")
    page = explorer.page

    # in words: each counted event type's clause of the API's sentence; the weight-0 ones folded into a note
    sentence = explanation["changes"]["task_quality"]
    counted = [clause for clause in sentence.split("; ") if not clause.endswith("counts for nothing (weight 0)")]
    assert page.locator('[data-field="changes-task_quality"] li').all_inner_texts() == counted
    assert counted == ["run_trust fell from 100.0 to 50.0"]
    assert "failure.infinite_tool_loop (1 event)" in explorer.field("uncounted-task_quality")
    assert page.locator('[data-field="changes-economic"] li').all_inner_texts() == [
        "payment_completed unchanged at 100.0", "payment_failed is new at 0.0",
    ]  # fmt: skip
    assert explorer.field("explained-economic") == f"{explanation['categories']['economic']['score']:.1f}"

    # as bars: per counted event type, what it adds to the category now and 7 days ago
    economic = explanation["categories"]["economic"]
    chart = page.locator('[data-category="economic"] svg.contribution-chart')
    assert chart.locator(".contribution-bar.now").count() == chart.locator(".contribution-bar.before").count() == 2
    titles = chart.locator(".contribution-bar title").all_text_contents()
    for event_type, windows in economic["event_types"].items():
        for key, label in (("7d_ago", "7 days ago"), ("current", "now")):
            shown = f"{event_type} {label}: {_signed(_contribution(windows[key]))} points to economic"
            assert any(title.startswith(shown) for title in titles), (shown, titles)
    now = sum(_contribution(windows["current"]) for windows in economic["event_types"].values())
    assert abs(50 + now - economic["score"]) < 1e-6  # the bars add up to the score
    assert (
        explorer.field("capped")
        == f"1 signal from source {explanation['capped'][0]['source']} over the daily cap was not counted."
    )
    no_events = page.locator('[data-category="identity_hygiene"]')
    assert no_events.inner_text().endswith("No events in this category, now or 7 days ago.")

    # the references, in the API's order; a run's links to its page
    shown = page.locator("ol.references li").evaluate_all("items => items.map(item => item.dataset.reference)")
    assert shown == [reference["reference_id"] for reference in explanation["top_references"]]
    assert shown[0] == "inv-7" and page.locator('ol.references li[data-reference="inv-7"] a').count() == 0
    loop_reference = page.locator('ol.references li[data-reference="run-explained-loop"] .chip')
    assert loop_reference.inner_text() == "infinite tool loop"  # each run names its primary failure
    assert explorer.field("top-failure") == "infinite tool loop (the primary failure of most runs)"

    # how the score is made: docs/reputation.md, served beside the page as plain text
    assert page.locator('[data-field="reputation-doc"]').get_attribute("href") == "reputation.md"
    doc = httpx.get(f"{base_url}/ui/reputation.md")
    assert doc.status_code == 200 and doc.headers["content-type"] == "text/plain; charset=utf-8"
    assert doc.text == (Path(__file__).resolve().parents[1] / "docs" / "reputation.md").read_text()
    explorer.screenshot("ui-explain.png")
    explorer.follow(page.locator("ol.references a.reference-link", has_text="run-explained-loop"))
    assert page.locator("main h1").inner_text() == "Run run-explained-loop"
    assert explorer.field("readiness") == "unsafe for production"

    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def test_an_unknown_agent_is_one_not_found_message(browser: Browser, base_url: str, seeded: Tenant) -> None:
    explorer = _explorer(browser, base_url, seeded.key)
    explorer.open("#/identities/agent-nobody")
    errors = explorer.page.locator("main .error")
    assert errors.count() == 1 and errors.inner_text() == "Not found: no identity 'agent-nobody'"
    assert explorer.page.locator("main section").count() == 0
    explorer.page.context.close()
    assert explorer.errors and all("404 (Not Found)" in error for error in explorer.errors), explorer.errors


def _shown_identities(page: Page) -> list[str]:
    return page.locator("table.fleet tbody tr").evaluate_all("rows => rows.map(row => row.dataset.identity)")


def test_fleet_is_worst_first_sortable_and_its_alerts_link(explorer: Explorer, seeded: Tenant) -> None:
    explorer.open("#/fleet")
    page = explorer.page
    fleet = seeded.api.get("/v1/identities").json()["identities"]
    alerts = seeded.api.get("/v1/alerts").json()["alerts"]
    about = Counter(a["subject"] for a in alerts if a["alert"] == "identity_score_drop")
    worst_first = sorted(
        fleet, key=lambda r: (-about[r["identity"]], r["overall"] is None, r["overall"], r["identity"])
    )
    assert _shown_identities(page) == [row["identity"] for row in worst_first] and len(fleet) == 4
    for row in fleet:
        cells = f'table.fleet tr[data-identity="{row["identity"]}"]'
        assert abs(_float(explorer.field("overall", cells)) - row["overall"]) <= 0.05
        assert explorer.field("confidence", cells) == f"{round(100 * row['confidence'])}%"
    assert _paths(explorer.api_requests) == {"/v1/identities", "/v1/alerts"}
    # trust 90 yet unsafe: the day's point is red, not in the colour of its trust's band
    assert page.locator('tr[data-identity="agent-hasty"] .spark-point').get_attribute("class") == "spark-point unsafe"
    explorer.screenshot("ui-fleet.png")

    by_overall = sorted(fleet, key=lambda r: (r["overall"], r["identity"]))  # ties by name, either way
    explorer.follow(page.locator('a.sort[data-sort="overall"]'))
    highest_first = sorted(fleet, key=lambda r: (-r["overall"], r["identity"]))
    assert _shown_identities(page) == [row["identity"] for row in highest_first]
    assert page.locator('th[aria-sort="descending"]').inner_text().startswith("Reputation")
    explorer.follow(page.locator('a.sort[data-sort="overall"]'))
    assert _shown_identities(page) == [row["identity"] for row in by_overall]
    explorer.follow(page.locator('a.sort[data-sort="identity"]'))
    assert _shown_identities(page) == sorted(row["identity"] for row in fleet)

    assert "unsafe_share" in {alert["alert"] for alert in alerts}
    shown_alerts = page.locator("ul.alerts li .message").all_inner_texts()
    assert shown_alerts == [alert["message"] for alert in alerts]
    unsafe = page.locator("ul.alerts li", has_text="unsafe share").locator("a.subject")
    explorer.follow(unsafe)
    expected = seeded.api.get("/v1/runs", params={"readiness": "unsafe_for_production"}).json()["runs"]
    shown = page.locator("table.runs tbody tr").evaluate_all("rows => rows.map(row => row.dataset.runId)")
    assert shown == [run["run_id"] for run in expected] and len(shown) >= 5


def test_the_agent_page_charts_reputation_history_and_explains_off_band_runs(
    explorer: Explorer, seeded: Tenant
) -> None:
    explorer.open("#/identities/agent-hasty")
    page = explorer.page
    history = seeded.api.get("/v1/identities/agent-hasty/history", params={"days": 90}).json()["days"]
    assert len(history) == 90
    scored = [day for day in history if day["reputation"] is not None]
    assert scored and page.locator("svg.reputation-chart .reputation-point").count() == len(scored)
    titles = page.locator("svg.reputation-chart .reputation-point title").all_text_contents()
    assert titles[-1].startswith(f"{scored[-1]['day']}: reputation {scored[-1]['reputation']:.1f}")

    # every run unsafe: a reputation of 0.0, drawn as a line of its own above the time axis, not on it
    assert scored[-1]["reputation"] == 0.0
    axis_y = page.locator("svg.reputation-chart line.axis").evaluate_all(
        "lines => lines.map(l => +l.getAttribute('y1'))"
    )
    point_y = page.locator("svg.reputation-chart .reputation-point circle").evaluate_all(
        "circles => circles.map(c => +c.getAttribute('cy'))"
    )
    assert min(max(axis_y) - y for y in point_y) >= 10, (axis_y, point_y)

    runs = seeded.api.get("/v1/runs", params={"identity": "agent-hasty"}).json()["runs"]
    # trust 90 yet unsafe (a critical loop): in the unsafe lane, ringed, and the page says why
    off_band = [r for r in runs if r["trust_score"] >= 80 and r["readiness_level"] != "ready_for_runtime"]
    assert len(off_band) == 5
    assert page.locator("svg.trust-chart .trust-point.below-band").count() == len(off_band)
    assert page.locator('[data-field="below-band"]').inner_text() == (
        "5 runs are in a worse lane than their trust alone would give (ringed)."
    )
    reason = page.locator("svg.trust-chart .below-band title").first.text_content() or ""
    assert "its trust alone would be ready: a critical-severity cause makes it unsafe" in reason
    lanes = {
        lane: page.locator(f'svg.trust-chart rect.band[data-lane="{lane}"]').evaluate(
            "r => [+r.getAttribute('y'), +r.getAttribute('y') + +r.getAttribute('height')]"
        )
        for lane in ("ready_for_runtime", "review_recommended", "unsafe_for_production")
    }
    heights = page.locator("svg.trust-chart .trust-point circle").evaluate_all(
        "cs => cs.map(c => +c.getAttribute('cy'))"
    )
    top, bottom = lanes["unsafe_for_production"]
    assert len(heights) == 5 and all(top < y < bottom for y in heights), (lanes, heights)
    explorer.screenshot("ui-agent-history.png")


def _lab(rgb: list[int]) -> tuple[float, float, float]:
    """sRGB (0..255) to CIE L*a*b* (D65), where distance follows what the eye tells apart."""

    def linear(c: float) -> float:
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92

    r, g, b = (linear(c / 255) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _delta_e(first: list[int], second: list[int]) -> float:
    return sum((a - b) ** 2 for a, b in zip(_lab(first), _lab(second), strict=True)) ** 0.5


def test_failure_colours_are_distinct_and_shared_evidence_shows_both(explorer: Explorer) -> None:
    explorer.open("#/runs/run-loop-002")
    page = explorer.page
    colours = page.evaluate(
        """types => types.map((_, slot) => {
             const probe = document.createElement('span');
             probe.className = `chip slot-${slot}`;
             document.body.append(probe);
             const colour = getComputedStyle(probe).borderLeftColor;
             probe.remove();
             return colour.match(/\\d+/g).slice(0, 3).map(Number);
           })""",
        DIMENSIONS,
    )
    for i, first in enumerate(colours):
        for second in colours[i + 1 :]:
            assert _delta_e(first, second) > 40, (first, second)  # the old loop and cost colours: 29

    shared = page.locator("svg.causal-graph .graph-event.several")
    assert shared.count() == 6  # c0..c5 are evidence of the loop and of the cost explosion
    wedges = shared.first.locator(".graph-wedge").evaluate_all("paths => paths.map(p => p.getAttribute('class'))")
    assert len(wedges) == 2 and len(set(wedges)) == 2
    labels = page.locator("svg.causal-graph .graph-label").all_text_contents()
    assert labels[0] == "#0 http_get(url=api.example/rates)" and not any('{"' in label for label in labels)


def test_an_empty_list_without_filters_says_so(browser: Browser, base_url: str, embedded_store: Store) -> None:
    tenant = _tenant(base_url, embedded_store)
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open("#/runs")
    assert explorer.field("empty").startswith("No runs yet")
    explorer.open("#/runs?identity=nobody")
    assert explorer.field("empty") == "No runs match these filters."
    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


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


def _runs_now(fixture: str, identity: str, count: int) -> list[dict[str, Any]]:
    """`count` runs of `identity` with the fixture's events without timestamps (each at its finalize time)."""
    events = json.loads((FIXTURES / fixture).read_text())["events"]
    bare = [{k: v for k, v in event.items() if k != "timestamp"} for event in events]
    return [{"run_id": f"{identity}-{fixture[:-5]}-{n}", "identity": identity, "events": bare} for n in range(count)]


def test_the_fleet_tells_a_flaky_agent_from_a_clean_one(browser: Browser, base_url: str, embedded_store: Store) -> None:
    """Six clean runs and six execution errors score what six clean runs do: the runs, the execution errors
    and their share, the last run and the sparkline's red ticks tell them apart, and the share sorts."""
    tenant = _tenant(base_url, embedded_store)
    runs = _runs_now("session_clean.json", "agent-flaky", 6) + _runs_now("session_infra_error.json", "agent-flaky", 6)
    runs += _runs_now("session_clean.json", "agent-steady", 6)
    assert tenant.api.post("/v1/sessions/batch", json=runs).status_code == 201
    refresh_scores(embedded_store)
    fleet = {row["identity"]: row for row in tenant.api.get("/v1/identities").json()["identities"]}
    assert fleet["agent-flaky"]["overall"] == fleet["agent-steady"]["overall"] == 100.0
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open("#/fleet")
    page = explorer.page
    for identity, errors, marks in (("agent-flaky", "6 (50%)", 1), ("agent-steady", "0 (0%)", 0)):
        cells = f'table.fleet tr[data-identity="{identity}"]'
        row = fleet[identity]
        assert explorer.field("runs", cells) == str(row["runs"])
        assert explorer.field("execution-errors", cells) == errors
        assert explorer.field("unsafe-runs", cells) == "0" and explorer.field("top-failure", cells) == "—"
        assert explorer.field("last-run", cells) == f"{row['last_run_at'][:10]} {row['last_run_at'][11:16]}"
        spark = page.locator(f"{cells} svg.sparkline")
        assert spark.locator(".spark-error").count() == marks and spark.locator(".spark-point").count() == 1
        assert spark.get_attribute("aria-label").startswith(f"Last 30 days: {row['runs']} runs on 1 day")
    explorer.follow(page.locator('a.sort[data-sort="execution_errors"]'))
    assert _shown_identities(page) == ["agent-flaky", "agent-steady"]
    explorer.screenshot("ui-fleet-flaky.png")
    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def test_a_signal_without_a_reference_is_listed_beside_the_runs(
    browser: Browser, base_url: str, embedded_store: Store
) -> None:
    """Ten clean runs at +1.0 and one failed payment at -1.0 posted without a reference, which took the score
    from 100 to 53.3: the payment leads the list, by the points it took."""
    tenant = _tenant(base_url, embedded_store)
    assert (
        tenant.api.post("/v1/sessions/batch", json=_runs_now("session_clean.json", "agent-payer", 10)).status_code
        == 201
    )
    payment = {"identity": "agent-payer", "category": "economic", "event_type": "payment_failed", "score_delta": -1}
    assert tenant.api.post("/v1/reputation-events", json=[payment]).status_code == 202
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open("#/identities/agent-payer")
    page = explorer.page
    assert explorer.field("overall") == "53.3"
    items = page.locator("ol.references li")
    assert items.count() == 10 and items.first.get_attribute("data-reference") == "payment_failed"
    assert items.first.locator(".reference-name").inner_text() == "payment_failed signals (no reference)"
    assert items.first.locator('[data-field="points"]').inner_text() == "-23.3"
    assert items.nth(1).locator('[data-field="points"]').inner_text() == "+2.7"  # a run: a tenth of task quality
    explorer.page.context.close()
    tenant.api.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def test_the_run_page_says_what_openclaw_is(explorer: Explorer) -> None:
    explorer.open("#/runs/run-clean-001")
    assert "No OpenClaw failure mode was detected" in explorer.page.locator("main").inner_text()
    assert explorer.field("openclaw").startswith("OpenClaw is the taxonomy of agent failure modes")


def test_a_phone_reads_every_event_without_scrolling_sideways(browser: Browser, base_url: str, seeded: Tenant) -> None:
    """At 375 px the events table stacks each event's cells under their headings, inside the screen; no
    page is wider than the screen (the fleet's wide table scrolls within its own frame)."""
    storage = {
        "cookies": [],
        "origins": [{"origin": base_url, "localStorage": [{"name": "repute.apiKey", "value": seeded.key}]}],
    }
    page = browser.new_context(viewport={"width": 375, "height": 800}, storage_state=storage).new_page()
    explorer = Explorer(page, base_url)
    page.on("pageerror", lambda error: explorer.errors.append(f"uncaught: {error}"))
    for route in ("#/runs/run-multi-003", "#/identities/agent-atlas", "#/fleet", "#/runs"):
        explorer.open(route)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375, route
    explorer.open("#/runs/run-multi-003")
    row = page.locator("table.events tbody tr.evidence").first
    edges = row.locator("td").evaluate_all(
        "cells => cells.map(c => { const r = c.getBoundingClientRect(); return [r.left, r.right, c.dataset.label]; })"
    )
    assert [label for _, _, label in edges] == ["#", "Event id", "Type", "Time", "Payload", "Evidence of"]
    assert all(left >= 0 and right <= 375 for left, right, _ in edges), edges
    assert row.locator("td").last.locator(".chip").is_visible()
    explorer.screenshot("ui-phone-events.png")
    page.context.close()
    assert explorer.errors == [], explorer.errors


def test_the_run_page_shows_the_agent_tree_linked_both_ways(
    browser: Browser, base_url: str, embedded_store: Store
) -> None:
    """A multi-agent run (SPEC §3.5): the parent lists each agent's run with its verdict; a child links back.
    In a tenant of its own, so the seeded tenant's fleet stays as the other tests count it."""
    from tests.test_multi_agent_api import _post, record_three_agents

    tenant = _tenant(base_url, embedded_store)
    conversation = f"conv-{uuid.uuid4().hex[:12]}"
    _post(tenant.api, record_three_agents(conversation))
    parent = tenant.api.post(f"/v1/runs/{conversation}/finalize").json()
    explorer = _explorer(browser, base_url, tenant.key)
    explorer.open(f"#/runs/{conversation}")
    tree = explorer.page.locator('[data-field="agent-tree"]')
    for child in parent["child_runs"]:
        item = tree.locator(f'li[data-run="{child["run_id"]}"]')
        assert child["identity"] in item.inner_text()
        assert format_readiness(child["readiness_level"]) in item.inner_text().lower()
    researcher = tree.locator(f'li[data-run="{conversation}:researcher"] a.run-link')
    explorer.follow(researcher)
    assert conversation in explorer.field("parent-run")
    explorer.follow(explorer.page.locator('[data-field="parent-run"] a.run-link'))
    assert explorer.page.locator('[data-field="agent-tree"]').count() == 1
    explorer.open("#/identities/researcher")  # the agent page names the run its run was part of
    reference = explorer.page.locator(f'li[data-reference="{conversation}:researcher"]')
    assert reference.locator("a.parent-link").get_attribute("href") == f"#/runs/{conversation}"
    explorer.page.context.close()
    assert explorer.errors == [], f"console errors: {explorer.errors}"


def format_readiness(level: str) -> str:
    """How a readiness badge reads (its words, lower case)."""
    return level.replace("_", " ")


def test_the_agent_page_offers_a_signed_statement_that_verifies(explorer: Explorer, seeded: Tenant) -> None:
    """SPEC §15: the agent page downloads the identity's statement and shows how to verify it; the file
    verifies with the keys the page points at."""
    from service.statements.statement import verify

    explorer.open("#/identities/agent-atlas")
    command = explorer.field("statement-verify")
    keys_url = command.rsplit(" ", 1)[-1]
    assert command.startswith("repute verify agent-atlas.statement.json --keys ") and keys_url.endswith(
        "/.well-known/repute-keys.json"
    )
    with explorer.page.expect_download() as started:
        explorer.page.locator('[data-field="statement-download"]').click()
    download = started.value
    assert download.suggested_filename == "agent-atlas.statement.json"
    envelope = json.loads(Path(download.path()).read_text())
    statement = verify(envelope, httpx.get(keys_url).json(), datetime.now(UTC).date()).statement
    assert (statement["issuer"], statement["subject"]) == (seeded.name, "agent-atlas")
    assert explorer.field("statement-status").startswith("Signed with key ")
