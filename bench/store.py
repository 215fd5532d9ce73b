"""Store benchmarks (SPEC §13): one identity's reputation with 10,000,000 events in the table (flat, and
with decay), its explanation (SPEC §7.1), the refresh of the fleet view and the fleet list of 10,000
identities (with the runs of their 90 days, after the runs are seeded, and the UI's page of 1,000 with their
sparklines), the first page of the runs list among 300,000 runs, one identity's report (its reputation and
its runs' figures) and 90-day history beside them, and ingest through the finalize pipeline.
Embedded engine, this machine.

`REPUTE_BENCH_EVENTS=1000000 python -m bench store` for a quicker run."""

import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import orjson

from bench._server import disk_row, file_creation_ms, load_average, percentile
from service.diagnosis import parse_run
from service.services import reputation as reputation_service
from service.services.inputs import material_of
from service.services.receivers.whole import ingest_sessions
from service.services.reputation import explain
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import migrate

EVENTS = int(os.environ.get("REPUTE_BENCH_EVENTS", 10_000_000))
IDENTITIES = 10_000
FLEET_PAGE = 1_000  # what the UI's fleet page asks for
TENANT = "bench"

# Events spread over 10,000 identities and 400 days: three in five are the runs' own task_quality
# events (about one in six of them a weight-0 failure), the rest signals posted by three keys, one of
# which has a credibility of 0.5.
SEED_EVENTS = """
INSERT INTO reputation_events
    (tenant, event_id, timestamp, identity, category, event_type, score_delta, confidence, weight,
     reference_type, reference_id, source)
SELECT
    {tenant:String},
    generateUUIDv4(number),
    toDateTime64({today:Date}, 3, 'UTC') - toIntervalSecond(rand(number) % (400 * 86400)),
    concat('agent-', toString(number % {identities:UInt32})),
    ['task_quality', 'task_quality', 'task_quality', 'economic', 'identity_hygiene'][1 + number % 5] AS category,
    multiIf(category != 'task_quality', 'signal', number % 6 = 0, 'failure.cost_explosion', 'run_trust'),
    (rand(number + 1) % 2001) / 1000 - 1,
    1,
    if(number % 6 = 0 AND category = 'task_quality', 0, 1),
    if(category = 'task_quality', 'run', 'transaction'),
    toString(number),
    if(category = 'task_quality', 'repute', ['key-a', 'key-b', 'key-c'][1 + intDiv(number, 5) % 3])
FROM numbers({start:UInt64}, {count:UInt64})
"""
RUNS = 300_000
# Runs of the same 10,000 identities over the last 100 days, each written as the service writes a streamed
# run: an open version, then (all but one in fifty) a finalized one in a later INSERT.
SEED_RUNS = """
INSERT INTO runs (tenant, run_id, version, identity, kind, created_at, run_at, finalized_at, status,
                  execution_status, readiness, trust_score, score, event_count)
SELECT
    {tenant:String},
    concat('run-', leftPad(toString(number), 7, '0')),
    {version:UInt64},
    concat('agent-', toString(number % {identities:UInt32})),
    'run',
    toDateTime64({today:Date}, 3, 'UTC') - toIntervalSecond(rand(number) % (100 * 86400)) AS opened,
    opened + toIntervalSecond({version:UInt64} * 60),
    if({version:UInt64} = 1, NULL, opened + toIntervalSecond(60)),
    if({version:UInt64} = 1, 'open', 'finalized'),
    if({version:UInt64} = 1, '', 'ok'),
    if({version:UInt64} = 1, '', ['ready_for_runtime', 'review_recommended', 'unsafe_for_production'][1 + number % 3]),
    if({version:UInt64} = 1, NULL, number % 101),
    if({version:UInt64} = 1, 0, (number % 101) / 100),
    50
FROM numbers({count:UInt64})
WHERE {version:UInt64} = 1 OR number % 50 != 0
"""
# The finalized versions' figures by identity and day, as the finalize writes them beside each run.
SEED_RUN_DAYS = """
INSERT INTO identity_run_days
    (tenant, identity, day, run_id, version, run_at, execution_status, readiness, trust_score, primary_failure,
     primary_impact)
SELECT tenant, identity, toDate(run_at, 'UTC'), run_id, version, run_at, execution_status, readiness, trust_score,
       primary_failure, 0
FROM runs
WHERE tenant = {tenant:String} AND status = 'finalized'
"""
HALF_LIFE_DAYS = 30.0
# A process's first reads of a table cost the engine more: its fourth read of the daily sums took
# 30-40 ms in every process (chdb 26.9), the following ones 6-9 ms. Latencies are measured after them.
WARM_UP_READS = 5


def timed(call: Callable[[], object], repeat: int) -> list[float]:
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
        material_of(parse_run(orjson.dumps(make_session(rng, f"ingest-{i}", f"agent-{i % 50}", 50))))
        for i in range(2000)
    ]
    started = time.perf_counter()
    for start in range(0, len(sessions), 500):
        ingest_sessions(store, "bench-ingest", sessions[start : start + 500], datetime.now(UTC), 0.8)
    return len(sessions) / (time.perf_counter() - started)


def main() -> list[tuple[str, str, str]]:
    with tempfile.TemporaryDirectory() as directory:
        file_ms = file_creation_ms(Path(directory))
        store = Store(Settings(data_dir=Path(directory)))
        try:
            migrate(store)
            today = datetime.now(UTC).date()
            started = time.perf_counter()
            store.client.command(
                SEED_EVENTS,
                parameters={"tenant": TENANT, "today": today, "identities": IDENTITIES, "start": 0, "count": EVENTS},
                settings={"max_insert_threads": 2},
            )
            seeded = time.perf_counter() - started
            _settle(store)
            reputation_store.set_credibility(store, TENANT, "key-b", 0.5, datetime.now(UTC))
            flat = _per_identity(lambda identity: reputation_store.identity_reputation(store, TENANT, identity, today))
            load_after_reads = load_average()
            explained = _per_identity(lambda identity: explain(store, TENANT, identity, today), repeat=100)
            refresh = timed(lambda: reputation_store.refresh_scores(store), 3)
            fleet = timed(lambda: reputation_store.list_identities(store, TENANT, limit=IDENTITIES), 20)
            reputation_store.sync_half_life(store, Settings(reputation_half_life_days=HALF_LIFE_DAYS))
            decayed = _per_identity(
                lambda identity: reputation_store.identity_reputation(store, TENANT, identity, today)
            )
            ingest = _ingest_rate(store)
            first_pages, identity_pages = _runs_list(store, today)  # last: its seeding sets off merges
            report = _per_identity(
                lambda identity: reputation_service.reputation_report(store, TENANT, identity, today)
            )
            history = _per_identity(lambda identity: reputation_service.history(store, TENANT, identity, 90, today))
            load_after_runs = load_average()
            refresh_with_runs = timed(lambda: reputation_store.refresh_scores(store), 3)
            fleet_with_runs = timed(lambda: reputation_store.list_identities(store, TENANT, limit=IDENTITIES), 20)
            fleet_page = timed(lambda: reputation_service.fleet(store, TENANT, datetime.now(UTC), limit=FLEET_PAGE), 20)
        finally:
            store.close()
    return [
        (f"seed {EVENTS:,} reputation events (INSERT SELECT, MV folding)", f"{EVENTS / seeded:,.0f} events/s", "-"),
        ("ingest 50-event runs (pipeline, batches of 500)", f"{ingest:,.0f} runs/s", "-"),
        *_latency("one identity's reputation", flat, "< 20 ms"),
        (load_after_reads, "after the one-identity reads", "-"),
        *_latency(f"one identity's reputation, half-life {HALF_LIFE_DAYS:g} days", decayed, "< 20 ms"),
        *_latency("one identity's explanation", explained, "-"),
        (f"refresh of the fleet view, {IDENTITIES:,} identities, p50", f"{statistics.median(refresh):.0f} ms", "-"),
        (f"fleet list of {IDENTITIES:,} identities, p50", f"{statistics.median(fleet):.1f} ms", "< 200 ms"),
        *_latency(f"runs list among {RUNS:,} runs, first page of 50", first_pages, "-"),
        *_latency(f"one identity's reputation with its runs' figures, beside {RUNS:,} runs", report, "< 20 ms"),
        *_latency("one identity's 90-day history", history, "< 50 ms"),
        (load_after_runs, "after the reports and histories", "-"),
        (f"refresh beside {RUNS:,} runs, p50", f"{statistics.median(refresh_with_runs):.0f} ms", "-"),
        (
            f"fleet list of {IDENTITIES:,} identities beside {RUNS:,} runs, p50",
            f"{statistics.median(fleet_with_runs):.1f} ms",
            "< 200 ms",
        ),
        *_latency(
            f"the fleet page of the UI and `repute fleet` ({FLEET_PAGE:,} identities, sparklines)", fleet_page, "-"
        ),
        *_latency("runs list, one identity's first page", identity_pages, "-"),
        disk_row(file_ms),
    ]


def _runs_list(store: Store, today: date) -> tuple[list[float], list[float]]:
    """The first page of the tenant's runs, and of one identity's, after seeding RUNS runs."""
    for version in (1, 2):
        parameters = {"tenant": TENANT, "version": version, "today": today, "identities": IDENTITIES, "count": RUNS}
        store.client.command(SEED_RUNS, parameters=parameters)
    store.client.command(SEED_RUN_DAYS, parameters={"tenant": TENANT})
    _settle(store)
    first_pages = timed(lambda: run_store.list_runs(store, TENANT, limit=50), 20)
    return first_pages, _per_identity(lambda identity: run_store.list_runs(store, TENANT, identity=identity, limit=50))


def _settle(store: Store, limit_seconds: float = 600) -> None:
    """Waits for the merges the seeding started: reads are measured on a store at rest, as a store that
    filled up over months is, not against the merges of a bulk insert on the same two cores."""
    deadline = time.monotonic() + limit_seconds
    while time.monotonic() < deadline and store.client.query("SELECT count() FROM system.merges").result_rows[0][0]:
        time.sleep(1)


def _per_identity(read: Callable[[str], object], repeat: int = 200) -> list[float]:
    """Latencies of `read` over distinct random identities, after WARM_UP_READS untimed reads of others."""
    identities = [f"agent-{random.Random(i).randrange(IDENTITIES)}" for i in range(repeat + WARM_UP_READS)]
    # The timed identities are seeds 1..repeat, as before the extra warm-up reads, so figures compare.
    untimed, measured = identities[:1] + identities[repeat + 1 :], iter(identities[1 : repeat + 1])
    for identity in untimed:
        read(identity)
    return timed(lambda: read(next(measured)), repeat)


def _latency(what: str, samples: list[float], target: str) -> list[tuple[str, str, str]]:
    return [
        (f"{what}, p50", f"{statistics.median(samples):.1f} ms", "-"),
        (f"{what}, p99", f"{percentile(samples, 0.99):.1f} ms", target),
    ]


if __name__ == "__main__":
    for metric, measured, target in main():
        print(f"{metric:60} {measured:>18} {target:>10}")
