"""Where a single finalize's milliseconds go (issue #44): one 50-event run posted whole, 300 times, through the
service function the write pool runs for POST /v1/sessions (`ingest_posted`), in this process on a fresh
embedded store; each step timed by wrapping the function that does it. Steps that run side by side (the
reputation store's read beside the events' and causes' inserts) overlap: the total is the wall time of the
whole. What the API adds (HTTP, the write pool) is the API benchmark's single-run figure minus this total.
Then the engine's own share of each insert: one stored row copied within its table by one statement (no
Python, no client library), beside the same into a table with no view and no projection (the floor)."""

import random
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

from bench._server import percentile
from bench.store import timed
from service.services import finalize
from service.services.receivers import whole
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store import writer
from service.store.client import Store
from service.store.migrate import migrate
from service.testing.factory import make_session

RUNS = 300
COPIES = 100
# Each table a finalize inserts into, and what the engine does beside the rows (its views, its projections).
TABLES = (
    ("run_events", ""),
    ("run_failures", ""),
    ("identity_run_days", ""),
    ("reputation_events", " (and its daily view)"),
    ("runs", " (and its two projections)"),
)
PLAIN = "CREATE TABLE IF NOT EXISTS bench_plain (a UInt64, b String) ENGINE = MergeTree ORDER BY a"
# (module, function, step): each call's time is added to its step.
STEPS = (
    (whole, "parse_run", "parse the body"),
    (whole, "materials_of", "check it (the model's fields, the caps)"),
    (run_store, "run_states", "read: the runs' states"),
    (run_store, "get_runs", "read: the stored runs (reposts only)"),
    (finalize, "_judge", "diagnose, classify, emit"),
    (reputation_store, "_stored_keys", "read: the reputation ids held (beside the two inserts below)"),
    (writer, "run_events", "insert run_events"),
    (writer, "failures", "insert run_failures"),
    (writer, "reputation_events", "insert reputation_events (and its view)"),
    (writer, "runs", "insert runs (and its projections)"),
)


def _timed(spent: dict[str, list[float]], step: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            spent[step].append((time.perf_counter() - started) * 1000)

    return wrapper


def main() -> list[tuple[str, str, str]]:
    rng = random.Random(44)
    bodies = [orjson.dumps(make_session(rng, f"p-{i}", f"agent-{i % 40}", 50)) for i in range(RUNS + 50)]
    spent: dict[str, list[float]] = defaultdict(list)
    totals: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(data_dir=Path(directory))
        store = Store(settings)
        migrate(store)
        for body in bodies[:50]:  # warm: first inserts ask for column types, caches fill
            whole.ingest_posted(store, "bench", [body], settings, datetime.now(UTC))
        with ExitStack() as patches:
            for module, name, step in STEPS:
                patches.enter_context(mock.patch.object(module, name, _timed(spent, step, getattr(module, name))))
            for body in bodies[50:]:
                started = time.perf_counter()
                whole.ingest_posted(store, "bench", [body], settings, datetime.now(UTC))
                totals.append((time.perf_counter() - started) * 1000)
        engine = _engine_inserts(store)
        store.close()
    rows = [
        (f"{step}", f"{statistics.median(spent[step]):.2f} ms median, {len(spent[step]) / RUNS:.1f} per run", "-")
        for _, _, step in STEPS
        if spent[step]
    ]
    total = f"{statistics.median(totals):.1f} / {percentile(totals, 0.99):.1f} ms"
    return [*rows, ("one whole run, 50 events, p50 / p99 (no HTTP, no pool)", total, "-"), *engine]


def _engine_inserts(store: Store) -> list[tuple[str, str, str]]:
    """Each table's one-row INSERT ... SELECT, COPIES times: the engine's time for an insert of it."""
    store.client.command(PLAIN)
    store.client.command("INSERT INTO bench_plain VALUES (1, 'x')")
    rows = []
    for table, beside in (*TABLES, ("bench_plain", " (no view, no projection)")):
        spent = timed(partial(store.client.command, f"INSERT INTO {table} SELECT * FROM {table} LIMIT 1"), COPIES)
        rows.append((f"engine alone: one row into {table}{beside}", f"{statistics.median(spent):.2f} ms median", "-"))
    return rows
