"""Fleets written straight into the store, row for row as the finalize pipeline writes them (runs,
run_failures, identity_run_days, and the reputation events of service.reputation.emit), so that each alert
scenario controls exactly the numbers its rule reads."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from service.diagnosis import DIMENSIONS
from service.reputation.emit import FinalizedRun, events_for_run
from service.reputation.model import ReputationEvent
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from service.store.records import RunRecord
from service.store.runs import day_row

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
IMPACT = {
    "infinite_tool_loop": -20, "memory_degradation": -13, "ignoring_tool_outputs": -17, "context_pollution": -12,
    "cost_explosion": -15, "skill_failure": -14,
}  # fmt: skip
ERROR = ("agent", "provider_error")
EVENT_COUNT = 20


def events_before_2026_11_23(run: FinalizedRun) -> list[ReputationEvent]:
    """What a server emitted before SPEC §7 changed on 2026-11-23: run_trust = (trust - 50) / 50, also for
    a run without events; the other events as now."""
    events = events_for_run(replace(run, event_count=max(run.event_count, 1)))
    if run.execution_status == "execution_error":
        return events
    old_delta = (run.trust_score - 50) / 50
    return [replace(e, score_delta=old_delta) if e.event_type == "run_trust" else e for e in events]


@dataclass
class FleetWriter:
    store: Store
    tenant: str
    emit: Callable[[FinalizedRun], list[ReputationEvent]] = events_for_run  # the model of the server writing
    runs: list[RunRecord] = field(default_factory=list)
    failures: list[list[Any]] = field(default_factory=list)
    events: list[ReputationEvent] = field(default_factory=list)
    count: int = 0

    def run(
        self,
        identity: str,
        at: datetime,
        trust: int = 95,
        readiness: str = "ready_for_runtime",
        failures: Sequence[str] = (),
        error: tuple[str, str] | None = None,
        event_count: int = EVENT_COUNT,
        composite: float | None = None,
    ) -> None:
        """One finalized run; `error` = (stage, reason) makes it an execution error, a `composite` an OTLP
        session with that performance score."""
        self.count += 1
        run_id = f"run-{self.count:05d}-{identity}"
        passed = trust >= 80 and readiness != "unsafe_for_production"  # SPEC §6: an unsafe run fails
        status = "execution_error" if error else ("ok" if passed else "quality_failure")
        stage, reason = error or ("", "")
        kind = "run" if composite is None else "session"
        row = _run_row(self.tenant, run_id, identity, at, trust, readiness, failures, status, stage, reason)
        self.runs.append(replace(row, kind=kind, event_count=event_count, session_composite=composite))
        causes = [] if error else [(name, "high", IMPACT[name]) for name in failures]
        for position, (name, severity, impact) in enumerate(causes):
            self.failures.append([
                self.tenant, run_id, position, identity, at, name, severity, impact, position == 0,
                f"{name} observed", "a -> b", [f"event_{position}"], "fix it",
            ])  # fmt: skip
        finalized = FinalizedRun(
            self.tenant, run_id, identity, kind, at, status, trust, causes, stage, reason, composite,
            readiness=readiness, event_count=event_count,
        )  # fmt: skip
        self.events.extend(self.emit(finalized))

    def flush(self) -> None:
        causes: dict[str, list[list[Any]]] = {}
        for row in self.failures:
            causes.setdefault(row[1], []).append(row)
        writer.run_days(self.store, [day_row(record, causes.get(record.run_id, [])) for record in self.runs])
        writer.failures(self.store, self.failures)
        reputation_store.insert_events(self.store, self.tenant, self.events)
        writer.runs(self.store, self.runs)
        self.runs, self.failures, self.events = [], [], []


def _run_row(
    tenant: str,
    run_id: str,
    identity: str,
    at: datetime,
    trust: int,
    readiness: str,
    failures: Sequence[str],
    status: str,
    stage: str,
    reason: str,
) -> RunRecord:
    return RunRecord(
        tenant=tenant, run_id=run_id, version=1, identity=identity, suite="demo", task_id=run_id, created_at=at,
        started_at=at - timedelta(minutes=3), ended_at=at, run_at=at, finalized_at=at, status="finalized",
        execution_status=status, failure_stage=stage, failure_reason_code=reason, score=trust / 100,
        trust_score=trust, readiness=readiness, primary_failure=failures[0] if failures else "",
        dimension_scores=dict.fromkeys(DIMENSIONS, 100), event_count=EVENT_COUNT, tool_calls=6, total_tokens=4000,
        diagnosis="{}",
    )  # fmt: skip


def steady_day(writer: FleetWriter, day: int, identities: int = 6, now: datetime = NOW) -> None:
    """One day of a healthy fleet, `day` days before `now`: four runs per identity with trust in the 90s,
    one in four with a failure (the type rotating with the day and the identity, so every type shows up
    once a day), one review verdict and one execution error (agent/provider_error) in the whole fleet."""
    types = sorted(IMPACT)
    start = now - timedelta(days=day)
    for n in range(identities):
        for k in range(4):
            failures = [types[(day + n) % len(types)]] if k == 0 else []
            writer.run(f"agent-{n:02d}", start - timedelta(hours=1 + 5 * k + n / 10), 91 + k + n % 3, failures=failures)
    writer.run("agent-00", start - timedelta(hours=22), trust=75, readiness="review_recommended")
    writer.run("agent-01", start - timedelta(hours=23), trust=0, readiness="unsafe_for_production", error=ERROR)


def steady_fleet(writer: FleetWriter, days: range = range(30), now: datetime = NOW) -> None:
    for day in days:
        steady_day(writer, day, now=now)
    writer.flush()


def unsafe_day(writer: FleetWriter, now: datetime = NOW) -> None:
    """A healthy history, then a usual day up to `now` except that its six runs with a failure are judged
    unsafe_for_production: 6 of 25 quality runs."""
    steady_fleet(writer, range(1, 30), now=now)
    steady_day(writer, 0, now=now)
    for record in writer.runs:
        if record.primary_failure:
            record.readiness = "unsafe_for_production"
    writer.flush()
