"""Diagnosis benchmarks (SPEC §13): one 100,000-event run, and many 50-event runs. JSON parsing excluded:
the events are Python objects before the clock starts. Mixed event types as in tests/factory.py.

Three figures each: `diagnose()` (scores, causes, summaries; the graph is built on first use), then with
`to_dict()` (the full causal graph materialized, as Critiqor's reference engine always does), then with
`canonical_json()` too (the canonical bytes and the hash: what the store writes). Best of several rounds;
the machine's load average is reported alongside, as the figures scale with the CPU left to them.
"""

import os
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from service.diagnosis import Diagnosis, diagnose
from service.testing.factory import make_events

BIG_RUN = 100_000
SMALL_RUN = 50
SMALL_RUNS = 4_000
ROUNDS = 5
EVENTS_TARGET = ">= 500,000 events/s"
RUNS_TARGET = ">= 20,000 runs/s"
START = datetime(2026, 11, 1, tzinfo=UTC)

Events = list[dict[str, Any]]


def _as_stored(diagnosis: Diagnosis) -> tuple[dict[str, Any], bytes]:
    return diagnosis.to_dict(), diagnosis.canonical_json()


STAGES: dict[str, Callable[[Events], object]] = {
    "diagnose()": diagnose,
    "diagnose() + to_dict()": lambda events: diagnose(events).to_dict(),
    "diagnose() + to_dict() + canonical_json()": lambda events: _as_stored(diagnose(events)),
}


def _best_seconds(work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _each(stage: Callable[[Events], object], runs: list[Events]) -> None:
    for events in runs:
        stage(events)


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(13)
    big = make_events(rng, BIG_RUN, START)
    small = [make_events(rng, SMALL_RUN, START) for _ in range(SMALL_RUNS)]
    rows = []
    for name, stage in STAGES.items():
        seconds = _best_seconds(partial(stage, big))
        rows.append((f"{name}, one {BIG_RUN:,}-event run", f"{BIG_RUN / seconds:,.0f} events/s", EVENTS_TARGET))
    for name, stage in STAGES.items():
        seconds = _best_seconds(partial(_each, stage, small))
        rows.append((f"{name}, {SMALL_RUN}-event runs", f"{SMALL_RUNS / seconds:,.0f} runs/s", RUNS_TARGET))
    rows.append(("load average (1 min) after the diagnosis benchmarks", f"{os.getloadavg()[0]:.1f}", "-"))
    return rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
