"""Diagnosis benchmarks (SPEC §13): one 100,000-event run, and many 50-event runs. JSON parsing excluded:
the events are Python objects before the clock starts. Mixed event types as in tests/factory.py.

Three figures each: `diagnose()` (scores, causes, summaries; the graph is built on first use), then with
`to_dict()` (the full causal graph materialized, as Critiqor's reference engine always does), then with
`canonical_json()` too (the canonical bytes and the hash: what the store writes); and `diagnose()` on the
mix issue #14 sets its targets on (tool calls 40%, tool outputs 40%, token usage and memory events 10%).

Best of several rounds, by the wall clock and by the thread's CPU time: on a shared machine the wall
clock measures the CPU left to us (the load average is reported alongside), the CPU time what the engine
itself costs.
"""

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from bench._server import load_average
from service.diagnosis import Diagnosis, diagnose
from service.testing.factory import TOOLS, make_events

BIG_RUN = 100_000
SMALL_RUN = 50
SMALL_RUNS = 4_000
ROUNDS = 5
EVENTS_TARGET = ">= 500,000 events/s (issue #14: 600,000)"
RUNS_TARGET = ">= 20,000 runs/s (issue #14: 18,000)"
START = datetime(2026, 11, 1, tzinfo=UTC)

Events = list[dict[str, Any]]


def _as_stored(diagnosis: Diagnosis) -> tuple[dict[str, Any], bytes]:
    return diagnosis.to_dict(), diagnosis.canonical_json()


STAGES: dict[str, Callable[[Events], object]] = {
    "diagnose()": diagnose,
    "diagnose() + to_dict()": lambda events: diagnose(events).to_dict(),
    "diagnose() + to_dict() + canonical_json()": lambda events: _as_stored(diagnose(events)),
}


def issue_mix(rng: random.Random, count: int, start: datetime) -> Events:
    """Tool calls 40%, tool outputs 40%, token usage 10%, memory events 10% (issue #14)."""
    events: Events = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.4:
            event: dict[str, Any] = {"event": "tool_call", "tool": rng.choice(TOOLS), "args": {"k": rng.randint(0, 6)}}
        elif roll < 0.8:
            event = {"event": "tool_output", "tool": rng.choice(TOOLS), "used": rng.random() > 0.1}
        elif roll < 0.9:
            event = {"event": "token_usage", "total_tokens": rng.randint(100, 4000)}
        else:
            event = {"event": "memory_event", "action": rng.choice(["stored", "hit", "miss"])}
        event["timestamp"] = (start + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        events.append(event)
    return events


def _best_seconds(work: Callable[[], object]) -> tuple[float, float]:
    """(wall, thread CPU) seconds, the best of ROUNDS each."""
    wall = cpu = float("inf")
    for _ in range(ROUNDS):
        started, cpu_started = time.perf_counter(), time.thread_time()
        work()
        wall, cpu = min(wall, time.perf_counter() - started), min(cpu, time.thread_time() - cpu_started)
    return wall, cpu


def _rate(count: int, unit: str, work: Callable[[], object]) -> str:
    wall, cpu = _best_seconds(work)
    return f"{count / wall:,.0f} {unit} (CPU time: {count / cpu:,.0f})"


def _each(stage: Callable[[Events], object], runs: list[Events]) -> None:
    for events in runs:
        stage(events)


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(13)
    inputs = {"": make_events, " (issue #14 mix)": issue_mix}
    rows = []
    for mix, make in inputs.items():
        big = make(rng, BIG_RUN, START)
        small = [make(rng, SMALL_RUN, START) for _ in range(SMALL_RUNS)]
        stages = STAGES if not mix else {"diagnose()": diagnose}
        for name, stage in stages.items():
            rate = _rate(BIG_RUN, "events/s", partial(stage, big))
            rows.append((f"{name}, one {BIG_RUN:,}-event run{mix}", rate, EVENTS_TARGET))
        for name, stage in stages.items():
            rate = _rate(SMALL_RUNS, "runs/s", partial(_each, stage, small))
            rows.append((f"{name}, {SMALL_RUN}-event runs{mix}", rate, RUNS_TARGET))
    rows.append((load_average(), "after the diagnosis benchmarks", "-"))
    return rows


if __name__ == "__main__":
    for row in main():
        print(" | ".join(row))
