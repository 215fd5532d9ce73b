"""`repute demo`: a synthetic fleet, stored through the real pipeline, so that the dashboards and the
alerts have something to show.

Every identity runs a few times a day for `days` days up to `now`. Runs are event lists that the
diagnosis engine judges like any other (failures come from the evidence, not from labels), with
back-dated timestamps, so each run lands on its day. Most agents are healthy; one degrades over the last
week (its habitual failures become frequent and severe, its payments fail, a credential leaks); an
infrastructure incident (the model provider failing) turns a burst of runs into execution errors a few
hours before `now`; a trickle of other execution errors runs through the month. Economic and
identity_hygiene signals go in as posted signals would. The same options and `now` always give the same
fleet, with the same ids, so running it twice stores nothing new.
"""

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from itertools import islice
from typing import Any

from service.model import RunHeader, RunMaterial
from service.reputation.model import ReputationEvent
from service.services.receivers.whole import ingest_sessions
from service.services.reputation import signal_event
from service.store import reputation as reputation_store
from service.store.client import Store

NAMES = (
    "atlas", "borealis", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris", "juniper", "kestrel",
    "lumen", "meridian", "nimbus", "onyx", "pioneer", "quartz", "raven", "sierra", "tundra", "umber", "vesper",
    "willow", "zephyr",
)  # fmt: skip
SUITES = ("customs-evals", "support-evals", "repo-maintenance")
TOOLS = ("search", "fetch", "read_file", "run_tests", "sql", "edit_file")
BACKGROUND_ERRORS = (
    ("setup", "toolchain_missing"), ("repo_setup", "clone_error"), ("evaluator", "evaluator_error"),
    ("agent", "budget_exceeded"),
)  # fmt: skip
BACKGROUND_ERROR_RATE = 0.015
INCIDENT = ("agent", "provider_error")
INCIDENT_HOURS_AGO = 6
INCIDENT_HOURS = 2
DEGRADING_DAYS = 7
DAY_SECONDS = 86_400
RUN_SECONDS_MAX = 1_800  # a run's events span less than this, so no run ends after `now`
BATCH = 400

DEMO_SOURCE = "demo"  # the source of the demo's posted signals, as a key id would be


@dataclass(frozen=True)
class DemoOptions:
    days: int = 30
    identities: int = 24
    seed: int = 7


@dataclass(frozen=True)
class Profile:
    """How an identity behaves: how often a run shows a failure, and which failures it tends to."""

    identity: str
    failure_rate: float
    habits: tuple[str, ...]
    degrading: bool


@dataclass(frozen=True)
class DemoSummary:
    tenant: str
    runs: int
    stored: int
    signals: int
    degrading: str

    def line(self) -> str:
        stage, reason = INCIDENT
        return (
            f"tenant {self.tenant!r}: {self.runs} runs ({self.stored} new) and {self.signals} signals; degrading"
            f" agent {self.degrading}; infrastructure incident ({stage}/{reason}) {INCIDENT_HOURS_AGO} h ago"
        )


class RunEvents:
    """One run's events: clean tool work, then the evidence of the failures asked for."""

    def __init__(self, rng: random.Random, start: datetime) -> None:
        self.rng = rng
        self.at = start
        self.events: list[dict[str, Any]] = []

    def add(self, event: str, **fields: Any) -> None:
        self.at += timedelta(seconds=self.rng.randint(1, 20))
        self.events.append({"event": event, "timestamp": self.at.isoformat().replace("+00:00", "Z"), **fields})

    def clean_work(self, run_id: str) -> None:
        self.add("memory_event", action="stored", key="task")
        for step in range(self.rng.randint(3, 8)):
            tool = self.rng.choice(TOOLS)
            self.add("tool_call", tool=tool, args={"target": f"{run_id}/{step}"})
            self.add("tool_output", tool=tool, status="ok", used=True)
            self.add("decision", choice="continue")
        self.add("context_event", saturation=self.rng.randint(20, 70))
        self.add("skill_event", skill="planning", invoked=True)
        self.add("token_usage", total_tokens=self.rng.randint(800, 4000))

    def loop(self, severe: bool) -> None:
        tool = self.rng.choice(TOOLS)
        for _ in range(5 if severe else 3):
            self.add("tool_call", tool=tool, args={"target": "same"})
            self.add("tool_output", tool=tool, status="error")
        for _ in range(3 if severe else 0):
            self.add("retry_event", reason="no progress")

    def memory(self, severe: bool) -> None:
        for _ in range(3 if severe else 1):
            self.add("memory_event", action="recall_failed", key="task")

    def ignored_outputs(self, severe: bool) -> None:
        for _ in range(2 if severe else 1):
            self.add("tool_output", tool="search", used=False)

    def context(self, severe: bool) -> None:
        self.add("context_event", saturation=97 if severe else 88)

    def cost(self, severe: bool) -> None:
        self.add("token_usage", total_tokens=31_000 if severe else 13_000)

    def skill(self, severe: bool) -> None:
        for _ in range(2 if severe else 1):
            self.add("skill_event", skill="planning", invoked=False)

    def staged_error(self, stage: str, reason: str) -> None:
        self.add("error_event", stage=stage, reason=reason, message=f"{stage} failed: {reason}")


FAILURES: dict[str, Callable[[RunEvents, bool], None]] = {
    "infinite_tool_loop": RunEvents.loop,
    "memory_degradation": RunEvents.memory,
    "ignoring_tool_outputs": RunEvents.ignored_outputs,
    "context_pollution": RunEvents.context,
    "cost_explosion": RunEvents.cost,
    "skill_failure": RunEvents.skill,
}


def identity_names(count: int) -> list[str]:
    """agent-atlas ... agent-zephyr, then agent-atlas-2 and so on."""
    return [
        f"agent-{NAMES[i % len(NAMES)]}" + (f"-{i // len(NAMES) + 1}" if i >= len(NAMES) else "") for i in range(count)
    ]


def profiles(rng: random.Random, count: int) -> list[Profile]:
    degrading = rng.randrange(count)
    return [
        Profile(name, rng.uniform(0.05, 0.3), tuple(rng.sample(sorted(FAILURES), 2)), i == degrading)
        for i, name in enumerate(identity_names(count))
    ]


def _failures(rng: random.Random, profile: Profile, day: int, events: RunEvents) -> None:
    """A degrading agent shows its habits, then every failure mode, more often and more severely each day
    of its bad week; the others now and then show one of their habits."""
    if profile.degrading and day < DEGRADING_DAYS:
        worse = (DEGRADING_DAYS - day) / DEGRADING_DAYS  # 1/7 a week ago, 1 on the last day
        others = [name for name in sorted(FAILURES) if name not in profile.habits]
        for failure in (*profile.habits, *others):
            chance = 0.5 + 0.5 * worse if failure in profile.habits else worse * worse
            if rng.random() < chance:
                FAILURES[failure](events, rng.random() < worse)
    elif rng.random() < profile.failure_rate:
        FAILURES[rng.choice(profile.habits)](events, rng.random() < 0.15)


def _session(
    rng: random.Random, profile: Profile, day: int, start: datetime, incident: tuple[datetime, datetime], seed: int
) -> RunMaterial:
    run_id = f"demo{seed}-{profile.identity}-{start:%Y%m%dT%H%M%S}"
    events = RunEvents(rng, start)
    events.clean_work(run_id)
    _failures(rng, profile, day, events)
    execution = None
    if incident[0] <= start < incident[1]:
        stage, reason = INCIDENT
        execution = {"status": "execution_error", "stage": stage, "reason": reason, "message": "provider answered 503"}
    elif rng.random() < BACKGROUND_ERROR_RATE:
        events.staged_error(*rng.choice(BACKGROUND_ERRORS))
    header = RunHeader(profile.identity, run_id, rng.choice(SUITES), f"task-{rng.randint(1, 40):02d}")
    return RunMaterial.from_events(header, events.events, execution)


def _seconds_into(rng: random.Random, start: datetime, span_seconds: int) -> datetime:
    return start + timedelta(seconds=rng.randrange(span_seconds))


def sessions(
    rng: random.Random, fleet: Sequence[Profile], options: DemoOptions, now: datetime
) -> Iterator[RunMaterial]:
    """Oldest day first: every identity's runs of the day; on the last day, also two runs per identity
    (harness retries) inside the incident."""
    incident_start = now - timedelta(hours=INCIDENT_HOURS_AGO)
    incident = (incident_start, incident_start + timedelta(hours=INCIDENT_HOURS))
    for day in reversed(range(options.days)):
        day_start = now - timedelta(days=day + 1)
        for profile in fleet:
            starts = {_seconds_into(rng, day_start, DAY_SECONDS - RUN_SECONDS_MAX) for _ in range(rng.randint(3, 7))}
            if day == 0:
                starts |= {_seconds_into(rng, incident_start, INCIDENT_HOURS * 3600) for _ in range(2)}
            for start in sorted(starts):
                yield _session(rng, profile, day, start, incident, options.seed)


def signals(rng: random.Random, fleet: Sequence[Profile], options: DemoOptions, now: datetime) -> list[dict[str, Any]]:
    """A payment most days and a key rotation every two weeks per identity; over its bad week the
    degrading agent tries two payments a day and most fail, and a credential of it leaks two days before
    `now`."""
    found = []
    for profile in fleet:
        for day in range(options.days):
            day_start = now - timedelta(days=day + 1)
            failing = profile.degrading and day < DEGRADING_DAYS
            for _ in range(2 if failing else int(rng.random() < 0.6)):
                completed = rng.random() < (0.1 if failing else 0.92)
                event_type, delta = ("payment_completed", 1.0) if completed else ("payment_failed", -1.0)
                at = _seconds_into(rng, day_start, DAY_SECONDS)
                found.append(_signal(profile, "economic", event_type, delta, at, "transaction"))
            if day % 14 == 13:
                at = _seconds_into(rng, day_start, DAY_SECONDS)
                found.append(_signal(profile, "identity_hygiene", "key_rotated", 1.0, at, "attestation"))
        if profile.degrading:
            leak = now - timedelta(days=2)
            found.append(_signal(profile, "identity_hygiene", "credential_leaked", -1.0, leak, "attestation"))
    return found


def _signal(
    profile: Profile, category: str, event_type: str, delta: float, at: datetime, reference: str
) -> dict[str, Any]:
    return {
        "identity": profile.identity,
        "category": category,
        "event_type": event_type,
        "score_delta": delta,
        "timestamp": at,
        "reference_type": reference,
        "reference_id": f"{event_type}-{at:%Y%m%dT%H%M%S}",
    }


def _chunks(items: Iterator[RunMaterial], size: int) -> Iterator[list[RunMaterial]]:
    while chunk := list(islice(items, size)):
        yield chunk


def _as_arrived(posted: list[ReputationEvent]) -> list[tuple[datetime, list[ReputationEvent]]]:
    """The signals grouped as they would have arrived, each day's on its day with the day's last one: the
    daily cap counts per day of arrival (SPEC §7.1), and a history posted at once would pass it."""
    days: dict[date, list[ReputationEvent]] = {}
    for event in posted:
        days.setdefault(event.timestamp.date(), []).append(event)
    return [(max(event.timestamp for event in events), events) for events in days.values()]


def seed_demo(store: Store, tenant: str, options: DemoOptions, now: datetime, pass_threshold: float) -> DemoSummary:
    """Stores the fleet as whole runs (service.services.receivers.whole), posts the signals, refreshes the
    scores."""
    rng = random.Random(options.seed)
    fleet = profiles(rng, options.identities)
    runs = stored = 0
    for batch in _chunks(sessions(rng, fleet, options, now), BATCH):
        results = ingest_sessions(store, tenant, batch, now, pass_threshold)
        runs += len(results)
        stored += sum(result.created for result in results)
    posted = [signal_event(tenant, DEMO_SOURCE, s, now, None, "signal") for s in signals(rng, fleet, options, now)]
    for arrived_at, arrivals in _as_arrived(posted):
        reputation_store.insert_signals(store, tenant, DEMO_SOURCE, arrivals, arrived_at)
    reputation_store.refresh_scores(store)
    degrading = next(p.identity for p in fleet if p.degrading)
    return DemoSummary(tenant, runs, stored, len(posted), degrading)
