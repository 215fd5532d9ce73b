"""Diagnosis benchmarks (SPEC §13): one 100,000-event run, and many 50-event runs. JSON parsing excluded:
the events are Python objects before the clock starts. Mixed event types as in tests/factory.py.

Three figures each: `diagnose()` (scores, causes, summaries; the graph is built on first use), plus
`to_dict()` (the full causal graph materialized, as Critiqor's reference engine always does), plus
`canonical_json()` (the canonical bytes and the hash: what the store writes). Best of several rounds.
"""

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

from service.diagnosis import diagnose
from tests.factory import make_events

BIG_RUN = 100_000
SMALL_RUN = 50
SMALL_RUNS = 4_000
ROUNDS = 5
EVENTS_TARGET = ">= 500,000 events/s"
RUNS_TARGET = ">= 20,000 runs/s"
START = datetime(2026, 11, 1, tzinfo=UTC)


def _best_seconds(work: Callable[[], object], rounds: int = ROUNDS) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


STAGES: dict[str, Callable[[list[dict]], object]] = {
    "diagnose()": diagnose,
    "diagnose() + to_dict()": lambda events: diagnose(events).to_dict(),
    "diagnose() + to_dict() + canonical_json()": lambda events: _stored(diagnose(events)),
}


def _stored(diagnosis: object) -> tuple[object, bytes]:
    return diagnosis.to_dict(), diagnosis.canonical_json()  # type: ignore[attr-defined]


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(13)
    big = make_events(rng, BIG_RUN, START)
    small = [make_events(rng, SMALL_RUN, START) for _ in range(SMALL_RUNS)]
    rows = []
    for stage, run in STAGES.items():
        seconds = _best_seconds(partial(run, big))
        rows.append((f"{stage}, one {BIG_RUN:,}-event run", f"{BIG_RUN / seconds:,.0f} events/s", EVENTS_TARGET))
    for stage, run in STAGES.items():
        seconds = _best_seconds(partial(_each, run, small))
        rows.append((f"{stage}, {SMALL_RUN}-event runs", f"{SMALL_RUNS / seconds:,.0f} runs/s", RUNS_TARGET))
    return rows


def _each(run: Callable[[list[dict]], object], runs: list[list[dict]]) -> None:
    for events in runs:
        run(events)


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
