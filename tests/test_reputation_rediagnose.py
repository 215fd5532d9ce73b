"""`repute reputation rebuild --rediagnose` (SPEC §4.1) through the live server on the embedded store: a
tenant whose Claude Code runs were finalized under `critiqor`, then switched to `long-session`, ends up
exactly where a tenant that finalized them under `long-session` from the start is: every run's diagnosis
and verdict, its causes, every reputation read, the fleet view and explain. A second rebuild changes
nothing; one cut short converges; runs whose events are no longer stored are left as they were."""

import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.services import rebuild as rebuild_service
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from tests.reputation_oracle import assert_close
from tests.test_otlp_api import SENDERS, _fixture_lines

NOW = datetime.now(UTC).replace(microsecond=0)
OTLP_DAY = date(2025, 11, 20)  # the OTLP fixture's sessions, of the identity claude-code (service.name)
IDENTITIES = ("claude-code-ana", "claude-code-ben", "travel-agent")
LONG_FOR_CLAUDE_CODE = {"identities": ["claude-code*"]}
DAYS = 9
RUN_FIELDS = (
    "identity", "kind", "status", "run_at", "execution_status", "failure_stage", "failure_reason_code", "score",
    "trust_score", "readiness_level", "primary_failure", "event_count", "tool_calls", "total_tokens", "diagnosis",
    "profile", "session_performance",
)  # fmt: skip


def _events(at: datetime, tokens: list[int], repeat: int = 0) -> list[dict[str, Any]]:
    """A model request per entry of `tokens`, each after a tool call of its own (the last `repeat` calls
    repeat the first's arguments)."""
    events = []
    for n, spent in enumerate(tokens):
        args = {"file": "f0.py" if n >= len(tokens) - repeat else f"f{n}.py"}
        stamp = (at + timedelta(seconds=2 * n)).isoformat()
        events.append({"event": "tool_call", "tool": "Read", "args": args, "timestamp": stamp})
        events.append({"event": "token_usage", "total_tokens": spent, "timestamp": stamp})
    return events


def _sessions() -> list[dict[str, Any]]:
    """Nine days of a fleet: clean coding sessions (17,680 tokens), a huge one (250,000), a single call of
    31,000 tokens (with a caller's score on one day), a repetitive one, an execution error, one naming
    `critiqor` itself, and another agent's runs that no rule moves."""
    runs = []
    for day in range(DAYS):
        at = NOW - timedelta(days=day, hours=2)

        def run(identity: str, events: list[dict[str, Any]], day: int = day, **fields: Any) -> None:
            runs.append({"run_id": f"run-{day}-{len(runs)}", "identity": identity, "events": events, **fields})

        run("claude-code-ana", _events(at, [3_536] * 5))
        run("travel-agent", _events(at, [3_536] * 5))
        kind = day % 3
        if kind == 0:
            run("claude-code-ben", _events(at, [50_000] * 5))
        elif kind == 1:
            run("claude-code-ben", _events(at, [31_000]), **({"execution": {"score": 0.9}} if day == 1 else {}))
        else:
            run("claude-code-ben", _events(at, [2_000] * 6, repeat=4))
        if day == 3:
            failed = {"status": "execution_error", "stage": "agent", "reason": "provider_error"}
            run("claude-code-ana", _events(at, [40_000]), execution=failed)
        if day == 4:
            run("claude-code-ana", _events(at, [40_000]), profile="critiqor")
    return runs


def _send_otlp_fixture(client: httpx.Client) -> None:
    for line in _fixture_lines():
        body, headers = SENDERS["json"](line)
        assert client.post("/v1/logs", content=body, headers=headers).status_code == 200
    for session in ("sess-a1", "sess-b2"):
        client.post(f"/v1/runs/{session}/finalize").raise_for_status()


def _fill(client: httpx.Client) -> None:
    posted = client.post("/v1/sessions/batch", json=_sessions())
    assert posted.status_code == 201, posted.text
    _send_otlp_fixture(client)


def _put(client: httpx.Client, name: str, body: dict[str, Any]) -> None:
    client.put(f"/v1/profiles/{name}", json=body).raise_for_status()


def _finalized_under_critiqor(client: httpx.Client) -> None:
    """As a store finalized before the profiles existed: every run, OTLP sessions too, under critiqor;
    then the tenant switches its Claude Code runs to long-session (and its OTLP logs back to the default)."""
    _put(client, "critiqor", {"inputs": ["otlp_logs"]})
    _fill(client)
    _put(client, "critiqor", {"inputs": []})
    _put(client, "long-session", LONG_FOR_CLAUDE_CODE)


def _finalized_under_long_session(client: httpx.Client) -> None:
    _put(client, "long-session", LONG_FOR_CLAUDE_CODE)
    _fill(client)


def _rebuild(client: httpx.Client) -> dict[str, Any]:
    response = client.post("/v1/reputation/rebuild", params={"rediagnose": "true"})
    response.raise_for_status()
    return response.json()


def _runs(client: httpx.Client) -> dict[str, Any]:
    listed = client.get("/v1/runs", params={"limit": 1000}).json()["runs"]
    details = {run["run_id"]: client.get(f"/v1/runs/{run['run_id']}").json() for run in listed}
    return {run_id: {name: run[name] for name in RUN_FIELDS} for run_id, run in details.items()}


def _reads(client: httpx.Client) -> dict[str, Any]:
    """Every reputation read of the tenant's identities: the report and its explanation, today and on the
    day of the OTLP sessions."""
    found = {}
    for identity, as_of in [*((i, NOW.date()) for i in IDENTITIES), ("claude-code", OTLP_DAY)]:
        params = {"as_of": as_of.isoformat()}
        for path in ("reputation", "reputation/explain"):
            response = client.get(f"/v1/identities/{identity}/{path}", params=params)
            response.raise_for_status()
            found[f"{identity}/{path}"] = response.json()
    return found


def _fleet(client: httpx.Client) -> dict[str, Any]:
    rows = client.get("/v1/identities").json()["identities"]
    return {row["identity"]: {k: v for k, v in row.items() if k != "computed_at"} for row in rows}


def _causes(store: Store, tenant: str) -> dict[str, Any]:
    run_ids = [row[0] for row in store.client.query(
        "SELECT DISTINCT run_id FROM runs WHERE tenant = {t:String}", parameters={"t": tenant}
    ).result_rows]  # fmt: skip
    return run_store.causes_of(store, tenant, run_ids)


def _assert_same_store(store: Store, client: httpx.Client, expected: httpx.Client, tenants: tuple[str, str]) -> None:
    assert_close(_runs(client), _runs(expected))
    assert _causes(store, tenants[0]) == _causes(store, tenants[1])
    assert_close(_reads(client), _reads(expected))
    reputation_store.refresh_scores(store)
    assert_close(_fleet(client), _fleet(expected))


@pytest.fixture
def tenants(tenant: str) -> tuple[str, str]:
    return f"{tenant}_switched", f"{tenant}_fresh"


def test_rediagnose_equals_finalizing_under_the_new_profiles_from_the_start(
    make_client, embedded_store: Store, tenants: tuple[str, str]
) -> None:
    switched, fresh = make_client(tenants[0]), make_client(tenants[1])
    _finalized_under_critiqor(switched)
    _finalized_under_long_session(fresh)
    before = _runs(switched)
    assert before["run-0-0"]["primary_failure"] == "cost_explosion"  # a clean coding session, under critiqor
    assert before["sess-a1"]["primary_failure"] == "cost_explosion"
    assert _runs(fresh)["run-0-0"]["primary_failure"] is None

    plain = switched.post("/v1/reputation/rebuild").json()  # without --rediagnose: the verdicts stand
    assert (plain["runs_rediagnosed"], plain["runs_changed"]) == (0, 0) and _runs(switched) == before

    report = _rebuild(switched)
    # Re-diagnosed: every claude-code run but the execution error's (its diagnosis changes too: recorded
    # profile) and the one naming critiqor itself, and both OTLP sessions; travel-agent's stay.
    claude_code = sum(1 for run in _sessions() if run["identity"].startswith("claude-code"))
    assert report["runs_rediagnosed"] == claude_code - 1 + 2 and report["runs_without_events"] == 0
    assert report["runs_examined"] == len(_sessions()) + 2 and report["runs_changed"] > 0
    _assert_same_store(embedded_store, switched, fresh, tenants)
    assert _runs(switched)["run-1-5"]["execution_status"] == "ok"  # the caller's score 0.9 still decides

    again = _rebuild(switched)
    assert again == {**report, "runs_changed": 0, "events_retracted": 0, "events_emitted": 0, "runs_rediagnosed": 0}
    _assert_same_store(embedded_store, switched, fresh, tenants)


def _failing_once(calls: list[int], at_call: int, real: Callable[..., Any]) -> Callable[..., Any]:
    def step(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == at_call:
            raise RuntimeError("the process died here")
        return real(*args, **kwargs)

    return step


@pytest.mark.parametrize(
    ("module", "step"),
    [(run_store, "replace_failures"), (reputation_store, "insert_events"), (writer, "runs")],
)
def test_a_rediagnosis_cut_short_converges(
    make_client, embedded_store: Store, tenants: tuple[str, str], monkeypatch: pytest.MonkeyPatch, module, step: str
) -> None:
    """Cut short at each write of the second page (runs in pages of 7, their events read 25 at most at a
    time): run again, it ends where a rebuild that ran through ends, and a third run changes nothing."""
    switched, fresh = make_client(tenants[0]), make_client(tenants[1])
    _finalized_under_critiqor(switched)
    _finalized_under_long_session(fresh)

    def rebuild() -> rebuild_service.RebuildReport:
        how = rebuild_service.rediagnosis(embedded_store, tenants[0], 0.8, datetime.now(UTC))
        return rebuild_service.rebuild(embedded_store, tenants[0], page_runs=7, rediagnose=how)

    monkeypatch.setattr(module, step, _failing_once([], 2, getattr(module, step)))
    with pytest.raises(RuntimeError, match="died"):
        rebuild()
    monkeypatch.undo()
    monkeypatch.setattr(rebuild_service, "EVENTS_PER_READ", 25)
    rebuild()
    _assert_same_store(embedded_store, switched, fresh, tenants)
    last = rebuild()
    assert (last.runs_rediagnosed, last.runs_changed, last.events_emitted, last.events_retracted) == (0, 0, 0, 0)


def test_runs_whose_events_are_gone_are_left_as_they_were(make_client, embedded_store: Store, tenant: str) -> None:
    client = make_client(tenant)
    at = NOW - timedelta(hours=3)
    runs = [{"run_id": f"run-{n}", "identity": "claude-code-ana", "events": _events(at, [3_536] * 5)} for n in (1, 2)]
    client.post("/v1/sessions/batch", json=runs).raise_for_status()
    embedded_store.client.command(
        "DELETE FROM run_events WHERE tenant = {t:String} AND run_id = 'run-2'", parameters={"t": tenant}
    )  # as the events' TTL would have
    before = client.get("/v1/runs/run-2").json()
    _put(client, "long-session", LONG_FOR_CLAUDE_CODE)

    report = _rebuild(client)
    assert (report["runs_rediagnosed"], report["runs_without_events"], report["runs_examined"]) == (1, 1, 2)
    assert client.get("/v1/runs/run-1").json()["profile"]["name"] == "long-session"
    assert client.get("/v1/runs/run-2").json() == before
    assert _rebuild(client)["runs_without_events"] == 1


def test_repute_reputation_rebuild_rediagnose(cli_as, make_client, tenant: str) -> None:
    client = make_client(tenant)
    body = {"run_id": f"run-{uuid.uuid4().hex[:8]}", "identity": "claude-code-ana", "events": _events(NOW, [20_000])}
    client.post("/v1/sessions", json=body).raise_for_status()
    _put(client, "long-session", LONG_FOR_CLAUDE_CODE)
    cli_as(tenant)
    runner = CliRunner()
    done = runner.invoke(cli, ["reputation", "rebuild", "--rediagnose"])
    assert done.exit_code == 0, done.output
    assert done.stdout == (
        f"tenant {tenant}: 1 finalized runs examined, 1 re-diagnosed, 0 left as they were (their events are no"
        " longer stored); 1 changed: 2 events retracted, 1 emitted\n"
    )
    again = orjson.loads(runner.invoke(cli, ["reputation", "rebuild", "--rediagnose", "--json"]).stdout)
    assert again["runs_rediagnosed"] == 0 and again["events_emitted"] == 0
