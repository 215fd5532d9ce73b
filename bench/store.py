"""Store benchmarks (SPEC §13): one identity's reputation with 10,000,000 events in the table, the fleet
list of 10,000 identities, and ingest through the finalize pipeline. Embedded engine, this machine."""

import os
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from service.diagnosis import parse_run
from service.services import runs
from service.services.inputs import session_input
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store.client import Store
from service.store.migrate import migrate

EVENTS = int(os.environ.get("REPUTE_BENCH_EVENTS", 10_000_000))
IDENTITIES = 10_000
TENANT = "bench"

# Events spread over 10,000 identities and 400 days; about one in six is a weight-0 failure.
SEED_EVENTS = """
INSERT INTO reputation_events
    (tenant, event_id, timestamp, identity, category, event_type, score_delta, confidence, weight,
     reference_type, reference_id)
SELECT
    {tenant:String},
    generateUUIDv4(number),
    toDateTime64({today:Date}, 3, 'UTC') - toIntervalSecond(rand(number) % (400 * 86400)),
    concat('agent-', toString(number % {identities:UInt32})),
    ['task_quality', 'task_quality', 'task_quality', 'economic', 'identity_hygiene'][1 + number % 5],
    if(number % 6 = 0, 'failure.cost_explosion', 'run_trust'),
    (rand(number + 1) % 2001) / 1000 - 1,
    1,
    if(number % 6 = 0, 0, 1),
    'run',
    toString(number)
FROM numbers({count:UInt64})
"""


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _timed(call, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _ingest_rate(store: Store) -> float:
    rng = random.Random(5)
    from service.testing.factory import make_session

    sessions = [
        session_input(parse_run(orjson.dumps(make_session(rng, f"ingest-{i}", f"agent-{i % 50}", 50))))
        for i in range(2000)
    ]
    started = time.perf_counter()
    for start in range(0, len(sessions), 500):
        runs.ingest_sessions(store, "bench-ingest", sessions[start : start + 500], datetime.now(UTC), 0.8)
    return len(sessions) / (time.perf_counter() - started)


def main() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as directory:
        store = Store(Settings(data_dir=Path(directory)))
        try:
            migrate(store)
            today = datetime.now(UTC).date()
            started = time.perf_counter()
            store.client.command(
                SEED_EVENTS,
                parameters={"tenant": TENANT, "today": today, "identities": IDENTITIES, "count": EVENTS},
                settings={"max_insert_threads": 2},
            )
            seeded = time.perf_counter() - started
            identities = [f"agent-{random.Random(i).randrange(IDENTITIES)}" for i in range(200)]
            lookups = iter(identities * 2)

            def one_identity() -> None:
                reputation_store.identity_reputation(store, TENANT, next(lookups), today)

            one_identity()
            single = _timed(one_identity, 200)
            reputation_store.refresh_scores(store)
            fleet = _timed(lambda: reputation_store.list_identities(store, TENANT, limit=IDENTITIES), 20)
            ingest = _ingest_rate(store)
        finally:
            store.close()
    return [
        (f"seed {EVENTS:,} reputation events (INSERT SELECT, MV folding)", f"{EVENTS / seeded:,.0f} events/s", "-"),
        ("ingest 50-event runs (pipeline, batches of 500)", f"{ingest:,.0f} runs/s", "-"),
        ("one identity's reputation, p50", f"{statistics.median(single):.1f} ms", "-"),
        ("one identity's reputation, p99", f"{percentile(single, 0.99):.1f} ms", "< 20 ms"),
        (f"fleet list of {IDENTITIES:,} identities, p50", f"{statistics.median(fleet):.1f} ms", "< 200 ms"),
    ]


if __name__ == "__main__":
    for metric, measured, target in main():
        print(f"{metric:60} {measured:>18} {target:>10}")
