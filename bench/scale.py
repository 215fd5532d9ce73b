"""`python -m bench scale [--events N] [--identities M] [--runs R]` (SPEC §14): a large fleet's store on
one machine, and the service's reads measured on it.

The rows are made inside ClickHouse (INSERT ... SELECT from numbers()) through the same tables and
materialized views as the service's writes, not through Python: reputation events as bench/store.py makes
them (three in five the runs' own, the rest signals of three keys, one of which has a credibility of 0.5,
over 400 days), and runs copied from real ones that the finalize pipeline diagnosed and stored, each copy
with an id, identity and time of its own, as an open version and then its finalized one, with its
failures. The reads are measured on a store at rest (after the merges the load, or the last run's writes,
set off), through the service's own read functions, and the last line printed is SPEC §14's.

`--store DIR` keeps the store in DIR, and measures again a store that an earlier run filled there with the
same counts instead of filling it again (to profile the reads); a store an earlier release filled is
migrated first, as the service would. `--granules` prints, instead of the times, the parts and index
granules each read selects (`EXPLAIN indexes = 1`: bench/_granules.py).
"""

import argparse
import json
import multiprocessing
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import orjson

from bench._granules import NotingStore, granules
from bench._server import load_average, percentile
from bench.store import SEED_EVENTS, timed
from service.diagnosis import parse_run
from service.services import reputation, runs
from service.services.inputs import material_of
from service.services.receivers.whole import ingest_sessions
from service.settings import Settings
from service.store import reputation as reputation_store
from service.store import writer
from service.store.client import Store
from service.store.definitions import REFRESH_MARGIN_SECONDS
from service.store.migrate import migrate
from service.testing.factory import make_session

TENANT = "bench"
TEMPLATE_TENANT = "bench-template"
TEMPLATE_RUNS = 200  # distinct real runs the copies are made from
SEED_CHUNK = 10_000_000  # rows per INSERT ... SELECT: one statement's progress at a time
# Runs per INSERT ... SELECT: a run's row holds its diagnosis (kilobytes before compression), and a million of
# them in one statement outgrow the engine's memory bound (REPUTE_ENGINE_MEMORY_MIB, 3 GiB by default).
RUN_CHUNK = 50_000
MIB = 1024 * 1024
STORE_MARKER = "scale.json"
# The fill's engine may use more memory than the service's default (REPUTE_ENGINE_MEMORY_MIB): a statement
# seeding RUN_CHUNK runs, and the merges of the runs beside it, went past 3 GiB. The reads run at the default.
FILL_ENGINE_MEMORY_MIB = 8192
Row = tuple[str, str, str]

# Each copy: the template run it copies (by position), and the id, identity and opening time that make it
# a run of its own, spread over the last 365 days.
COPIES = """
(
    SELECT number % {templates:UInt32} AS position, lower(hex(MD5(toString(number)))) AS copy_id,
           concat('agent-', toString(number % {identities:UInt32})) AS copy_identity,
           toDateTime64({today:Date}, 3, 'UTC') - toIntervalSecond(cityHash64(number) % (365 * 86400)) AS opened
    FROM numbers({start:UInt64}, {count:UInt64})
) AS copies
"""
# The rows of a table for the template runs, each with its run's position among them.
TEMPLATE = """
INNER JOIN
(
    SELECT {table}.*, positions.position AS position
    FROM {table}
    INNER JOIN
    (
        SELECT run_id, row_number() OVER (ORDER BY run_id) - 1 AS position FROM runs WHERE tenant = {{template:String}}
    ) AS positions ON {table}.run_id = positions.run_id
    WHERE {table}.tenant = {{template:String}}
) AS template USING (position)
SETTINGS join_algorithm = 'hash', max_joined_block_size_rows = 8192
"""
# Every column of the template's run, but those that make the copy a run of its own (its id in the
# diagnosis too). The open version has no verdict yet.
SEED_RUNS = (
    """
INSERT INTO runs
SELECT template.* EXCEPT (position) REPLACE (
    {tenant:String} AS tenant,
    copy_id AS run_id,
    copy_identity AS identity,
    opened AS created_at,
    opened AS started_at,
    opened + toIntervalSecond(50) AS ended_at,
    opened + toIntervalSecond(if({open:Bool}, 0, 50)) AS run_at,
    if({open:Bool}, NULL, opened + toIntervalSecond(51)) AS finalized_at,
    if({open:Bool}, 'open', status) AS status,
    if({open:Bool}, version - 1, version) AS version,
    if({open:Bool}, '', replaceAll(diagnosis, template.run_id, copy_id)) AS diagnosis
)
FROM"""
    + COPIES
    + TEMPLATE.format(table="runs")
)
# The copies' rows of what the runs say per identity and day, as the finalize writes them beside each run.
SEED_RUN_DAYS = (
    """
INSERT INTO identity_run_days
SELECT template.* EXCEPT (position, written_at) REPLACE (
    {tenant:String} AS tenant, copy_identity AS identity, toDate(opened + toIntervalSecond(50), 'UTC') AS day,
    copy_id AS run_id, opened + toIntervalSecond(50) AS run_at
), now64(3) AS written_at
FROM"""
    + COPIES
    + TEMPLATE.format(table="identity_run_days")
)
SEED_FAILURES = (
    """
INSERT INTO run_failures
SELECT template.* EXCEPT (position) REPLACE (
    {tenant:String} AS tenant, copy_id AS run_id, copy_identity AS identity, opened + toIntervalSecond(50) AS run_at
)
FROM"""
    + COPIES
    + TEMPLATE.format(table="run_failures")
)


@dataclass(frozen=True)
class Scale:
    events: int
    identities: int
    runs: int


@dataclass(frozen=True)
class Figures:
    """Latencies in ms (refreshes in s), each read's figures with the load average when it ended."""

    read: list[float]
    stale_read: list[float]
    explain: list[float]
    history: list[float]
    refresh_full: list[float]
    refresh_changed: list[float]
    fleet: list[float]
    runs_first_reads: list[float]
    runs: list[float]
    identity_runs: list[float]
    rss_mib: float
    bytes_by_table: dict[str, int]
    loads: dict[str, str]


def _chunks(total: int, size: int = SEED_CHUNK) -> Iterator[tuple[int, int]]:
    for start in range(0, total, size):
        yield start, min(size, total - start)


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def seed_events(store: Store, scale: Scale, today: date) -> None:
    for start, count in _chunks(scale.events):
        store.client.command(
            SEED_EVENTS,
            parameters={"tenant": TENANT, "today": today, "identities": scale.identities, "start": start,
                        "count": count},
            settings={"max_insert_threads": 2},
        )  # fmt: skip
        _progress(f"  events: {start + count:,} of {scale.events:,}")


def _template_runs(store: Store) -> None:
    """TEMPLATE_RUNS real runs of 50 events, diagnosed and stored by the finalize pipeline."""
    rng = random.Random(31)
    sessions = [
        material_of(parse_run(orjson.dumps(make_session(rng, f"template-{i:04}", f"agent-{i}", 50))))
        for i in range(TEMPLATE_RUNS)
    ]
    ingest_sessions(store, TEMPLATE_TENANT, sessions, datetime.now(UTC), 0.8)


def seed_runs(store: Store, scale: Scale, today: date) -> None:
    _template_runs(store)
    common = {"tenant": TENANT, "template": TEMPLATE_TENANT, "templates": TEMPLATE_RUNS, "today": today,
              "identities": scale.identities}  # fmt: skip
    for is_open in (True, False):  # each run's open version is written before its finalized one
        for start, count in _chunks(scale.runs, RUN_CHUNK):
            store.client.command(SEED_RUNS, parameters={**common, "open": is_open, "start": start, "count": count})
            _progress(f"  runs ({'open' if is_open else 'finalized'}): {start + count:,} of {scale.runs:,}")
    for start, count in _chunks(scale.runs, RUN_CHUNK):
        store.client.command(SEED_FAILURES, parameters={**common, "start": start, "count": count})
        store.client.command(SEED_RUN_DAYS, parameters={**common, "start": start, "count": count})


def settle(store: Store, limit_seconds: float = 3600, quiet_looks: int = 3) -> float:
    """Waits for the merges the load started, so that the reads are measured on a store at rest (as one
    that filled up over months is): until `quiet_looks` looks 2 s apart find none (a store just opened
    starts merging what the last process wrote a moment after it opens); returns the seconds waited."""
    started, quiet = time.monotonic(), 0
    while time.monotonic() - started < limit_seconds and quiet < quiet_looks:
        merging = store.client.query("SELECT count() FROM system.merges").result_rows[0][0]
        quiet = 0 if merging else quiet + 1
        time.sleep(2)
    return time.monotonic() - started


# The runs list's first page's first reads in a process, shown apart from its latencies: they load the marks and
# primary indexes of the runs table and its projections that the engine keeps loaded after (bench/README.md,
# "The runs list without looking up finalized versions, and the per-identity reads' planning").
FIRST_READS = 5


def _per_identity(scale: Scale, read: Callable[[str], object], repeat: int, warm_up: int = 5) -> list[float]:
    """Latencies of `read` over `repeat` random identities, after `warm_up` untimed reads of others."""
    rng = random.Random(14)
    names = iter([f"agent-{rng.randrange(scale.identities)}" for _ in range(repeat + warm_up)])
    for _ in range(warm_up):
        read(next(names))
    return timed(lambda: read(next(names)), repeat)


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bytes_on_disk(store: Store) -> dict[str, int]:
    result = store.client.query(
        "SELECT table, sum(bytes_on_disk) FROM system.parts WHERE database = currentDatabase() AND active"
        " GROUP BY table"
    )
    return {table: int(size) for table, size in result.result_rows}


# The identities a minute of writes changes, as a share of the fleet: the incremental refresh recomputes
# these and keeps the others' rows.
CHANGED_SHARE = 0.01
# A minute's writes without changing a figure, so that reading a store twice reads the same store: each
# changed identity's latest run written again as a retried finalize would (same version: the reads and
# the merges fold it), which marks the identity as changed since the last refresh.
REWRITTEN_RUNS = """
INSERT INTO identity_run_days
SELECT * EXCEPT (written_at), now64(3) AS written_at
FROM identity_run_days
WHERE tenant = {tenant:String} AND identity IN {identities:Array(String)}
ORDER BY identity, day DESC, run_id
LIMIT 1 BY identity
"""


# What sql/identity_last_write.sql reads, for the whole store: when the store was last written.
LAST_WRITE = """
SELECT greatest(
    (SELECT max(written_at) FROM reputation_daily_types), (SELECT max(written_at) FROM identity_run_days),
    (SELECT max(updated_at) FROM source_credibility), (SELECT max(updated_at) FROM reputation_model),
    (SELECT max(requested_at) FROM fleet_refresh_requests))
"""


def _changed_minute(store: Store, scale: Scale) -> None:
    """CHANGED_SHARE of the identities marked as changed, as a minute of writes would (no figure changes)."""
    step = max(1, round(1 / CHANGED_SHARE))
    identities = [f"agent-{number}" for number in range(0, scale.identities, step)]
    store.client.command(REWRITTEN_RUNS, parameters={"tenant": TENANT, "identities": identities})


def _refreshes(store: Store, scale: Scale, repeat: int) -> tuple[list[float], list[float]]:
    """Seconds of the fleet table's refresh: recomputing every identity (a full pass, asked for as after a
    repair), and recomputing the identities a minute of writes changed."""
    full, changed = [], []
    for _ in range(repeat):
        writer.full_refresh_request(store, datetime.now(UTC))
        full += timed(lambda: reputation_store.refresh_scores(store), 1)
        _changed_minute(store, scale)
        changed += timed(lambda: reputation_store.refresh_scores(store), 1)
    return [ms / 1000 for ms in full], [ms / 1000 for ms in changed]


def _refresh_at_rest(store: Store) -> None:
    """A refresh of the fleet table that started more than its margin after the store's last write, as on a
    store at rest: one identity's reputation then reads the identity's row (sql/identity_reputation_refreshed.sql)."""
    last = store.client.query(LAST_WRITE).result_rows[0][0].replace(tzinfo=UTC)
    wait = (last + timedelta(seconds=REFRESH_MARGIN_SECONDS) - datetime.now(UTC)).total_seconds()
    if wait > 0:
        _progress(f"waiting {wait:.0f} s for the writes to leave the fleet refresh's margin")
        time.sleep(wait + 1)
    reputation_store.refresh_scores(store)


@contextmanager
def _scheduled_refreshes_stopped(store: Store) -> Iterator[None]:
    """The fleet table's scheduled refreshes held off: a full pass, which takes both cores for a while on a large
    store, asked for while the reads are timed would run under them, as it does once a day in service."""
    store.client.command("SYSTEM STOP VIEW reputation_scores_mv")
    try:
        yield
    finally:
        store.client.command("SYSTEM START VIEW reputation_scores_mv")


def measure(store: Store, scale: Scale, today: date, rest: bool = True) -> Figures:
    """The service's reads on the filled store: one identity's reputation, explanation and 90-day history,
    the fleet table's refreshes, the fleet list and the runs list; the peak RSS of this process, which opened
    the store filled by another as the service would (the engine keeps what the load allocated)."""
    loads = {}

    def noted(name: str, samples: list[float]) -> list[float]:
        loads[name] = load_average()
        return samples

    if rest:
        _progress(f"merges of the last writes: {settle(store):.0f} s")
        _refresh_at_rest(store)
    read = noted(
        "read", _per_identity(scale, lambda name: reputation.reputation_report(store, TENANT, name, today), 200)
    )
    with _scheduled_refreshes_stopped(store):
        writer.full_refresh_request(store, datetime.now(UTC))  # every fleet row stale, no figure changed
        stale_read = noted(
            "stale read",
            _per_identity(scale, lambda name: reputation.reputation_report(store, TENANT, name, today), 200),
        )
    reputation_store.refresh_scores(store)  # the full pass asked for, now rather than under the next reads
    explained = noted("explain", _per_identity(scale, lambda name: reputation.explain(store, TENANT, name, today), 100))
    history = noted(
        "history", _per_identity(scale, lambda name: reputation.history(store, TENANT, name, 90, today), 200)
    )
    full, changed = _refreshes(store, scale, 3)
    noted("refresh", full)
    fleet = noted("fleet", timed(lambda: reputation.fleet(store, TENANT, datetime.now(UTC), limit=100), 20))
    now = datetime.now(UTC)

    def first_page() -> object:
        return runs.list_runs(store, TENANT, now, limit=50)

    first_reads = timed(first_page, FIRST_READS)  # shown apart: the runs' caches (marks, index) fill
    first_pages = noted("runs", timed(first_page, 20))
    identity_pages = noted(
        "identity runs",
        _per_identity(scale, lambda name: runs.list_runs(store, TENANT, now, identity=name, limit=50), 50),
    )
    return Figures(read, stale_read, explained, history, full, changed, fleet, first_reads, first_pages, identity_pages,
                   _peak_rss_mib(), bytes_on_disk(store), loads)  # fmt: skip


@contextmanager
def _store_in(directory: Path | None) -> Iterator[Path]:
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        yield directory
        return
    with tempfile.TemporaryDirectory() as scratch:
        yield Path(scratch)


def _filled_rows(directory: Path, scale: Scale) -> list[Row] | None:
    """The load's figures of an earlier fill of the store with the same counts; None when there was none."""
    marker = directory / STORE_MARKER
    if not marker.exists():
        return None
    filled = json.loads(marker.read_text())
    return [tuple(row) for row in filled["rows"]] if filled["scale"] == asdict(scale) else None


def fill(path: Path, scale: Scale, today: date) -> None:
    """Fills the store at `path` and records the load's figures beside it (STORE_MARKER)."""
    store = Store(Settings(data_dir=path, engine_memory_mib=FILL_ENGINE_MEMORY_MIB))
    try:
        migrate(store)
        cpu_started, started = time.process_time(), time.perf_counter()
        seed_events(store, scale, today)
        seeded, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        reputation_store.set_credibility(store, TENANT, "key-b", 0.5, datetime.now(UTC))
        started = time.perf_counter()
        seed_runs(store, scale, today)
        runs_seeded = time.perf_counter() - started
        _progress("  waiting for merges ...")
        settled = settle(store)
    finally:
        store.close()
    rows = [
        ("fill: reputation events through the daily view", f"{scale.events / seeded:,.0f} events/s", "-"),
        ("fill: the same per CPU second (all threads)", f"{scale.events / cpu:,.0f} events/s", "-"),
        ("fill: runs, two versions and failures each", f"{scale.runs / runs_seeded:,.0f} runs/s", "-"),
        ("fill: merges after the load", f"{settled:.0f} s", "-"),
    ]
    (path / STORE_MARKER).write_text(json.dumps({"scale": asdict(scale), "rows": rows}))


def _explained(store: NotingStore, scale: Scale, today: date) -> list[Row]:
    """The parts and granules each read selects (bench/_granules.py), for one identity."""
    name = f"agent-{scale.identities // 2}"
    return granules(
        store,
        {
            "reputation": lambda: reputation.reputation_report(store, TENANT, name, today),
            "explanation": lambda: reputation.explain(store, TENANT, name, today),
            "90-day history": lambda: reputation.history(store, TENANT, name, 90, today),
            "fleet list": lambda: reputation.fleet(store, TENANT, datetime.now(UTC), limit=100),
            "runs list": lambda: runs.list_runs(store, TENANT, datetime.now(UTC), limit=50),
            "one identity's runs list": lambda: runs.list_runs(
                store, TENANT, datetime.now(UTC), identity=name, limit=50
            ),
        },
    )


def run(scale: Scale, directory: Path | None, explain: bool = False, rest: bool = True) -> tuple[list[Row], str]:
    """The table's rows and the last line (with `explain`, the granules each read selects instead of its
    times; without `rest`, the reads start at once, and find the fleet's rows stale). The store is filled in a
    process of its own, so that this one opens it as the service would and its memory is the reads' alone."""
    today = datetime.now(UTC).date()
    with _store_in(directory) as path:
        if _filled_rows(path, scale) is None:
            if any(path.iterdir()):  # a fill that did not end, or another store: filling it would add to it
                raise RuntimeError(f"{path} holds a store not filled to these counts: remove it, or name another")
            child = multiprocessing.get_context("spawn").Process(target=fill, args=(path, scale, today))
            child.start()
            child.join()
            if child.exitcode != 0:
                raise RuntimeError(f"filling the store failed (exit code {child.exitcode})")
        rows = _filled_rows(path, scale) or []
        store = NotingStore(Settings(data_dir=path)) if explain else Store(Settings(data_dir=path))
        try:
            migrate(store)
            if isinstance(store, NotingStore):
                return rows + _explained(store, scale, today), "EXPLAIN indexes = 1, one identity's reads"
            figures = measure(store, scale, today, rest)
        finally:
            store.close()
    return rows + report(scale, figures), last_line(scale, figures)


def _p99(samples: list[float]) -> float:
    return percentile(samples, 0.99)


def _latency(what: str, samples: list[float], target: str) -> list[Row]:
    return [
        (f"{what}, p50", f"{statistics.median(samples):.1f} ms", "-"),
        (f"{what}, p99", f"{_p99(samples):.1f} ms", target),
    ]


# What stores a reputation event (the event and its share of the daily sums), and a run.
EVENT_TABLES = ("reputation_events", "reputation_daily_types")
RUN_TABLES = ("runs", "run_failures", "identity_run_days")


def bytes_per(figures: Figures, scale: Scale) -> tuple[float, float]:
    """Bytes on disk per reputation event (EVENT_TABLES) and per run (RUN_TABLES)."""
    tables = figures.bytes_by_table
    event_bytes = sum(tables.get(name, 0) for name in EVENT_TABLES)
    run_bytes = sum(tables.get(name, 0) for name in RUN_TABLES)
    return event_bytes / scale.events, run_bytes / scale.runs


def last_line(scale: Scale, figures: Figures) -> str:
    """SPEC §14's summary, the benchmark's last line (the refresh: the slower of a full and a minute's pass)."""
    per_event, per_run = bytes_per(figures, scale)
    refresh = max(figures.refresh_full + figures.refresh_changed)
    return (
        f"scale: events {scale.events}, identities {scale.identities}, runs {scale.runs}, "
        f"read p99 {_p99(figures.read):.1f} ms, explain p99 {_p99(figures.explain):.1f} ms, "
        f"refresh {refresh:.1f} s, fleet {_p99(figures.fleet):.1f} ms, runs {_p99(figures.runs):.1f} ms, "
        f"history p99 {_p99(figures.history):.1f} ms, rss {figures.rss_mib:.0f} MiB, bytes/event {per_event:.1f}, "
        f"bytes/run {per_run:.1f}"
    )


def _seconds(samples: list[float]) -> str:
    return ", ".join(f"{s:.1f} s" for s in samples)


def report(scale: Scale, figures: Figures) -> list[Row]:
    per_event, per_run = bytes_per(figures, scale)
    tables = ", ".join(f"{name} {size / MIB:,.0f}" for name, size in sorted(figures.bytes_by_table.items()) if size)
    loads = figures.loads
    changed = f"{CHANGED_SHARE:.0%} of the identities changed"
    return [
        *_latency("one identity's reputation (its fleet row fresh)", figures.read, "p99 < 20 ms"),
        (loads["read"], "after the reputation reads", "-"),
        *_latency("one identity's reputation written to since the refresh (the formula)", figures.stale_read, "-"),
        (loads["stale read"], "after those reads", "-"),
        *_latency("one identity's explanation", figures.explain, "p99 < 100 ms"),
        (loads["explain"], "after the explanations", "-"),
        *_latency("one identity's 90-day history", figures.history, "p99 < 50 ms"),
        (loads["history"], "after the histories", "-"),
        ("refresh of the fleet table, every identity", _seconds(figures.refresh_full), "< 30 s"),
        (f"refresh of the fleet table, {changed}", _seconds(figures.refresh_changed), "< 30 s"),
        (loads["refresh"], "after the refreshes", "-"),
        *_latency("fleet list, first page of 100", figures.fleet, "< 200 ms"),
        (loads["fleet"], "after the fleet lists", "-"),
        (
            f"runs list, first page of 50, its first {FIRST_READS} reads in this process",
            ", ".join(f"{ms:.1f}" for ms in figures.runs_first_reads) + " ms",
            "-",
        ),
        *_latency("runs list, first page of 50, the next 20 reads", figures.runs, "< 100 ms"),
        (loads["runs"], "after the runs lists", "-"),
        *_latency("runs list, one identity's first page", figures.identity_runs, "-"),
        (loads["identity runs"], "after one identity's runs lists", "-"),
        ("peak RSS over the reads and refreshes", f"{figures.rss_mib:,.0f} MiB", "< 4096 MiB"),
        ("bytes on disk per reputation event (events and daily sums)", f"{per_event:.1f}", "-"),
        ("bytes on disk per run (versions, failures, figures by day)", f"{per_run:.1f}", "-"),
        ("bytes on disk by table, MiB", tables, "-"),
    ]


def cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench scale", description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000_000, metavar="N", help="reputation events")
    parser.add_argument("--identities", type=int, default=100_000, metavar="M", help="identities they belong to")
    parser.add_argument("--runs", type=int, default=10_000_000, metavar="R", help="finalized runs")
    parser.add_argument("--store", type=Path, metavar="DIR", help="keep the store there (reused when filled alike)")
    parser.add_argument("--granules", action="store_true", help="the parts and granules each read selects, no times")
    parser.add_argument(
        "--no-rest", action="store_true", help="read at once, not after the writes left the fleet refresh's margin"
    )
    args = parser.parse_args(argv)
    scale = Scale(args.events, args.identities, args.runs)
    rows, line = run(scale, args.store, args.granules, not args.no_rest)
    for metric, measured, target in rows:
        print(f"{metric:62} {measured:>24} {target:>12}")
    print(line)
    return 0
