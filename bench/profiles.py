"""Diagnosis under each built-in profile (SPEC §4.1, §4.2): what judging a run under `agent` (every detector,
the service's default for posted runs and traces) costs beside `critiqor` (Critiqor's six), on the same
events as bench/diagnose.py: one 100,000-event run and many 50-event runs, best of several rounds by the wall
clock and by the thread's CPU time (on a shared machine the CPU time is the engine's own cost)."""

import random
from datetime import UTC, datetime
from functools import partial

from bench._server import load_average
from bench.diagnose import BIG_RUN, SMALL_RUN, SMALL_RUNS, _each, _rate
from service.diagnosis import BUILT_IN, diagnose
from service.testing.factory import make_events

START = datetime(2026, 11, 1, tzinfo=UTC)


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(13)
    big = make_events(rng, BIG_RUN, START)
    small = [make_events(rng, SMALL_RUN, START) for _ in range(SMALL_RUNS)]
    rows = []
    for name, profile in BUILT_IN.items():
        judge = partial(diagnose, profile=profile)
        rows.append(
            (
                f"diagnose() under {name}, one {BIG_RUN:,}-event run",
                _rate(BIG_RUN, "events/s", partial(judge, big)),
                "-",
            )
        )
        rows.append(
            (
                f"diagnose() under {name}, {SMALL_RUN}-event runs",
                _rate(SMALL_RUNS, "runs/s", partial(_each, judge, small)),
                "-",
            )
        )
    rows.append((load_average(), "after the profile benchmarks", "-"))
    return rows
