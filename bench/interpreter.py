"""What bounds reads under write load on the embedded engine (issue #14): one identity's run list, alone,
beside engine-only inserts at write priority that keep a core busy, and beside one thread that runs the
write path's Python (diagnosing runs) at nice 0, at nice 19, and stepping aside for the reads between runs
as the service's write path does (`service.priority`). All in one process, as in the server: an engine
call gives up the interpreter's lock and waits for it again after, and the Python thread holds it."""

import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import orjson

from bench._server import percentile
from service.diagnosis import diagnose, parse_runs
from service.priority import reads, stepping_aside
from service.services.inputs import materials_of
from service.services.receivers.whole import ingest_sessions
from service.settings import Settings
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import migrate
from service.testing.factory import make_session

SECONDS = 10.0
TENANT = "bench"
IDENTITIES = 40
ENGINE_INSERT = """
INSERT INTO run_events
SELECT 'scratch', toString(number % 100), number, '', 'tool_call', NULL, repeat('x', 300), now64(3)
FROM numbers(100000)
"""

Work = Callable[[threading.Event], None]


def _seed(store: Store) -> None:
    """2,000 runs of 50 events over IDENTITIES identities, through the finalize pipeline."""
    for batch in range(20):
        rng = random.Random(batch)
        raw = [make_session(rng, f"seed-{batch}-{i}", f"agent-{i % IDENTITIES}", 50) for i in range(100)]
        sessions = materials_of(parse_runs(orjson.dumps(raw)), store.settings)
        ingest_sessions(store, TENANT, sessions, datetime.now(UTC), 0.8)


def _engine_inserts(store: Store, stop: threading.Event) -> None:
    while not stop.is_set():
        store.client.command(ENGINE_INSERT, settings={"os_thread_priority": 19})


def _diagnosing(nice: int, stop: threading.Event, aside: bool = False) -> None:
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    runs = [make_session(random.Random(7), f"work-{i}", "agent-work", 50)["events"] for i in range(50)]
    while not stop.is_set():
        if aside:
            stepping_aside(_diagnosed, runs)
        else:
            for run in runs:
                _diagnosed(run)


def _diagnosed(events: list[dict]) -> bytes:
    return diagnose(events).canonical_json()


def _reads_beside(store: Store, work: Work | None) -> list[float]:
    """Run lists of one identity after another for SECONDS, 10 ms apart, while `work` runs in a thread."""
    stop = threading.Event()
    worker = threading.Thread(target=work, args=(stop,)) if work else None
    if worker:
        worker.start()
    samples: list[float] = []
    deadline = time.monotonic() + SECONDS
    try:
        while time.monotonic() < deadline:
            identity = f"agent-{len(samples) % IDENTITIES}"
            started = time.perf_counter()
            with reads.reading():  # as the API counts a read in flight
                run_store.list_runs(store, TENANT, identity=identity, limit=50)
            samples.append((time.perf_counter() - started) * 1000)
            time.sleep(0.01)
    finally:
        stop.set()
        if worker:
            worker.join()
    return samples


def main() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as directory:
        store = Store(Settings(data_dir=Path(directory)))
        try:
            migrate(store)
            _seed(store)
            conditions: dict[str, Work | None] = {
                "alone": None,
                "beside engine-only inserts at nice 19": partial(_engine_inserts, store),
                "beside a thread diagnosing runs, nice 0": partial(_diagnosing, 0),
                "beside a thread diagnosing runs, nice 19": partial(_diagnosing, 19),
                "beside a thread diagnosing runs that steps aside for reads": partial(_diagnosing, 0, aside=True),
            }
            measured = {what: _reads_beside(store, work) for what, work in conditions.items()}
        finally:
            store.close()
    return [
        (
            f"one identity's run list {what}, p50 / p99",
            f"{statistics.median(s):.1f} / {percentile(s, 0.99):.1f} ms",
            "-",
        )
        for what, s in measured.items()
    ]
