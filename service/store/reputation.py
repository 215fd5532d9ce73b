"""SQL for reputation events, their sources and scores.

Idempotency holds at insert time: the daily materialized view folds every inserted block, so a
duplicate that reached the table would be double-counted forever. An event id is unique per tenant and
identity: events whose (identity, id) the tenant has stored already are skipped, under the tenant's lock,
and each block carries a deduplication token made of the tenant and the (identity, id) pairs it holds,
which the table and its view honour. That token only matches a block repeating one already stored (a
retry racing from another process), so every event reported stored is stored, and one tenant's ids can
never shadow another's.

Caps (SPEC §7.1): a posted event counts while its source has fewer than REPUTE_SIGNALS_PER_SOURCE_PER_DAY
counted events for that identity that arrived on the same UTC day, taking those stored and then the batch
in its order; the rest are stored with capped = 1 and never counted. A signal's arrival is stored as its
`inserted_at` (the time the request arrived), and the day is that of arrival, not of the timestamp, so
backdating cannot multiply the cap. The runs' own events (source `repute`) are never capped. The count
and the insert happen under a lock of the tenant's (INSERTS), so concurrent posts to one process cannot
both pass the cap. Several processes on one ClickHouse server do not share the lock: a source could then
get up to the cap times the number of processes counted for an identity and day, and one id posted to
two processes at once is stored twice unless both blocks are identical. Closing that would take a lock
in ClickHouse (e.g. a KeeperMap row per source) or routing each source to one process.
"""

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from uuid import UUID

import orjson

from service.reputation.model import LEGACY_SOURCE, REPUTE_SOURCE, ReputationEvent
from service.reputation.rebuild import Occupant
from service.settings import Settings
from service.store import writer
from service.store.client import Store
from service.store.definitions import (
    BOUND_WEIGHTS,
    EACH_DAY,
    REFRESH_MARGIN_SECONDS,
    bound_weights,
    formula_query,
)
from service.store.keyed_locks import KeyedLocks
from service.store.queries import load
from service.store.recent_writes import RecentWrites
from service.store.rows import as_utc, dicts
from service.vocab import IDENTITY_SORTS

# One per tenant: a tenant's inserts never wait behind another tenant's.
INSERTS = KeyedLocks()
RECENT_WRITES = RecentWrites()

EventKey = tuple[str, UUID]


@dataclass(frozen=True)
class InsertOutcome:
    """What became of a batch: each event is stored (counted, or capped: stored but never counted) or
    a duplicate of an event stored before or earlier in the batch."""

    stored: tuple[ReputationEvent, ...]
    capped: tuple[ReputationEvent, ...]
    duplicates: tuple[ReputationEvent, ...]


def _key(event: ReputationEvent) -> EventKey:
    return event.identity, event.event_id


def _first_positions(events: Iterable[ReputationEvent]) -> dict[EventKey, int]:
    """Where each (identity, id) first occurs in the batch: later occurrences are duplicates."""
    firsts: dict[EventKey, int] = {}
    for position, event in enumerate(events):
        firsts.setdefault(_key(event), position)
    return firsts


def _stored_keys(store: Store, tenant: str, events: Sequence[ReputationEvent]) -> set[EventKey]:
    result = store.client.query(
        "SELECT identity, event_id FROM reputation_events WHERE tenant = {tenant:String}"
        " AND identity IN {identities:Array(String)} AND event_id IN {ids:Array(UUID)}",
        parameters={
            "tenant": tenant,
            "identities": sorted({e.identity for e in events}),
            "ids": sorted({e.event_id for e in events}),  # UUIDs: bound without escaping each character
        },
    )
    return {(identity, event_id) for identity, event_id in result.result_rows} & {_key(e) for e in events}


@dataclass(frozen=True)
class Cap:
    """The daily cap of posted signals (REPUTE_SIGNALS_PER_SOURCE_PER_DAY), for a batch arriving at `arrived_at`."""

    per_day: int
    arrived_at: datetime


def _counted_on_arrival_day(
    store: Store, tenant: str, source: str, events: Sequence[ReputationEvent], arrived_at: datetime
) -> Counter[str]:
    """How many counted (not capped) events the source has stored per identity of the batch, of those
    that arrived on the UTC day of `arrived_at` (sql/source_counted_arrivals.sql)."""
    start = datetime.combine(arrived_at.astimezone(UTC).date(), time(), UTC)
    parameters = {
        "tenant": tenant,
        "identities": sorted({e.identity for e in events}),
        "start": start,
        "end": start + timedelta(days=1),
        "source": source,
    }
    result = store.client.query(load("source_counted_arrivals"), parameters=parameters)
    return Counter({identity: counted for identity, counted in result.result_rows})


def _capped(
    store: Store, tenant: str, source: str, events: Sequence[ReputationEvent], cap: Cap | None
) -> set[EventKey]:
    """The new events past the cap of their identity, in batch order after those already counted that day."""
    if not events or cap is None:
        return set()
    counted = _counted_on_arrival_day(store, tenant, source, events, cap.arrived_at)
    capped = set()
    for event in events:
        if counted[event.identity] >= cap.per_day:
            capped.add(_key(event))
        else:
            counted[event.identity] += 1
    return capped


def _deduplication_token(tenant: str, events: Sequence[ReputationEvent]) -> str:
    pairs = sorted([identity, str(event_id)] for identity, event_id in map(_key, events))
    return hashlib.sha256(orjson.dumps([tenant, pairs])).hexdigest()


def _write(
    store: Store, tenant: str, source: str, events: Sequence[ReputationEvent], capped: set[EventKey], cap: Cap | None
) -> None:
    """The rows, with the batch's arrival as their inserted_at when capped by arrival (else the insert's time)."""
    RECENT_WRITES.note(tenant, {e.identity for e in events})
    rows = [
        [tenant, e.event_id, e.timestamp, e.identity, e.category, e.event_type, e.score_delta, e.confidence,
         e.weight, e.reference_type, e.reference_id, e.attributes, source, int(_key(e) in capped), e.sign]
        for e in events
    ]  # fmt: skip
    writer.reputation_events(store, rows, _deduplication_token(tenant, events), None if cap is None else cap.arrived_at)


def _insert(
    store: Store,
    tenant: str,
    source: str,
    events: Sequence[ReputationEvent],
    cap: Cap | None,
    beside: Sequence[Callable[[], object]] = (),
) -> InsertOutcome:
    """Stores the events new to the tenant and identity, capped past `cap` (None: never capped). The calls
    `beside` run while the stored ids are read, and must all succeed before anything is written."""
    first_at = _first_positions(events)
    candidates = [events[position] for position in first_at.values()]
    known: set[EventKey] = set()
    with INSERTS.holding([(tenant,)]):
        store.together(lambda: known.update(_stored_keys(store, tenant, candidates) if candidates else ()), *beside)
        new = [e for e in candidates if _key(e) not in known]
        capped = _capped(store, tenant, source, new, cap)
        if new:
            _write(store, tenant, source, new, capped, cap)
    stored_at = {first_at[_key(e)] for e in new}
    return InsertOutcome(
        stored=tuple(new),
        capped=tuple(e for e in new if _key(e) in capped),
        duplicates=tuple(e for position, e in enumerate(events) if position not in stored_at),
    )


def insert_events(
    store: Store,
    tenant: str,
    events: Sequence[ReputationEvent],
    source: str = REPUTE_SOURCE,
    beside: Sequence[Callable[[], object]] = (),
) -> tuple[ReputationEvent, ...]:
    """Stores the runs' own events (source `repute`, never capped), retractions included; returns those
    that were new, the rest being stored already. A rebuild's retraction of an occupant (a row stored
    under an id of a run's, service.reputation.rebuild) takes the occupant's source instead. The calls
    `beside` (the finalize's other writes) run while the stored ids are read: the events are written once
    they all succeeded, and not at all when one failed."""
    return _insert(store, tenant, source, events, None, beside).stored


def _rebuild_rows(
    store: Store, tenant: str, identities: Iterable[str], run_ids: Iterable[str], ids: Iterable[UUID]
) -> Iterator[Occupant]:
    """The rows of sql/run_reputation_events.sql: the runs' own events (`run_ids`) and every row under
    `ids`, each with its source and cap flag."""
    parameters = {
        "tenant": tenant,
        "identities": sorted(set(identities)),
        "run_ids": sorted(set(run_ids)),
        "ids": sorted({str(event_id) for event_id in ids}),
        "source": REPUTE_SOURCE,
    }
    for row in dicts(store.client.query(load("run_reputation_events"), parameters=parameters)):
        source, capped = row.pop("source"), bool(row.pop("capped"))
        yield Occupant(ReputationEvent(**{**row, "timestamp": as_utc(row["timestamp"])}), source, capped)


def events_under(store: Store, tenant: str, keys: Iterable[EventKey]) -> list[Occupant]:
    """The rows stored under some (identity, id) pairs, whatever their source, each with the source and
    cap flag it was stored with."""
    wanted = set(keys)
    rows = _rebuild_rows(store, tenant, (identity for identity, _ in wanted), (), (i for _, i in wanted))
    return [row for row in rows if _key(row.event) in wanted]


def run_events(
    store: Store, tenant: str, runs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], list[ReputationEvent]]:
    """Every event stored for each run, given as (identity, run id), retractions included; a run without
    any is left out."""
    wanted = set(runs)
    found: dict[tuple[str, str], list[ReputationEvent]] = {}
    for row in _rebuild_rows(store, tenant, (identity for identity, _ in runs), (run for _, run in runs), ()):
        run = (row.event.identity, row.event.reference_id)
        if run in wanted:
            found.setdefault(run, []).append(row.event)
    return found


def insert_signals(
    store: Store, tenant: str, source: str, events: Sequence[ReputationEvent], arrived_at: datetime
) -> InsertOutcome:
    """Stores posted signals (SPEC §3.3) as coming from `source`, the id of the key that posted them:
    the caller's, never the client's choice, arriving at `arrived_at`. Past REPUTE_SIGNALS_PER_SOURCE_PER_DAY
    per identity and UTC day of arrival they are stored capped."""
    if not source or source in (REPUTE_SOURCE, LEGACY_SOURCE):
        raise ValueError(f"a posted signal's source must be a key id, not {source!r}")
    return _insert(store, tenant, source, events, Cap(store.settings.signals_per_source_per_day, arrived_at))


def set_credibility(store: Store, tenant: str, source: str, credibility: float, now: datetime) -> None:
    """An admin's credibility in [0, 1] for a source; reads apply it to every event of the source, past
    ones included, from the next read on."""
    if not (math.isfinite(credibility) and 0 <= credibility <= 1):
        raise ValueError("credibility must be a number in [0, 1]")
    writer.credibility(store, tenant, source, float(credibility), now)


def list_sources(store: Store, tenant: str) -> list[dict[str, Any]]:
    """Every source with counted events or a credibility set: {source, credibility, updated_at}, where a
    credibility never set reads 1 with updated_at None."""
    rows = dicts(store.client.query(load("sources_list"), parameters={"tenant": tenant}))
    for row in rows:
        row["updated_at"] = as_utc(row["updated_at"])
    return rows


def half_life(store: Store) -> float | None:
    """The decay half-life in days that every read applies; None: no decay."""
    result = store.client.query("SELECT argMax(half_life_days, updated_at) FROM reputation_model")
    return result.result_rows[0][0] or None


def sync_half_life(store: Store, settings: Settings) -> bool:
    """Puts REPUTE_REPUTATION_HALF_LIFE_DAYS in force for every read (the API, the fleet view and so
    Grafana and the alerts) when it differs from the one in force; returns whether it changed. The
    service calls it at start, after the migrations."""
    wanted = settings.reputation_half_life_days
    if half_life(store) == wanted:
        return False
    writer.half_life(store, float(wanted or 0), datetime.now(UTC))
    return True


# The formula's query (sql/definitions/reputation_at.sql) for one identity, not every identity as in the view.
ONE_IDENTITY = "tenant = {tenant:String} AND identity = {identity:String}"
# The view's columns that name the row rather than measure it.
ROW_KEYS = ("tenant", "identity", "as_of")


def identity_reputations(store: Store, tenant: str, identity: str, days: Sequence[date]) -> dict[date, dict[str, Any]]:
    """SPEC §7 for one identity on each of some days, from the daily aggregates, by the query of the view
    reputation_at (so both always agree), in one read; a day on which it has no event in the days the windows
    span is left out."""
    parameters = {"tenant": tenant, "identity": identity, "as_of_days": list(days), **bound_weights(store, tenant)}
    query = formula_query("definitions/reputation_at", ONE_IDENTITY, EACH_DAY, BOUND_WEIGHTS)
    return {
        row["as_of"]: {key: value for key, value in row.items() if key not in ROW_KEYS}
        for row in dicts(store.client.query(query, parameters=parameters))
    }


def identity_reputation(store: Store, tenant: str, identity: str, as_of: date) -> dict[str, Any] | None:
    """SPEC §7 for one identity on any day (`identity_reputations`); None when it has no event in the days
    the windows span."""
    return identity_reputations(store, tenant, identity, [as_of]).get(as_of)


def refreshed_reputation(
    store: Store, tenant: str, identity: str, as_of: date, margin_seconds: int = REFRESH_MARGIN_SECONDS
) -> dict[str, Any] | None:
    """The identity's reputation on as_of and its runs' figures of the window ({events, ..., runs,
    execution_errors, unsafe_runs, last_run_at, primary_failures, primary_impacts}) as the fleet table's last
    refresh computed them (sql/identity_reputation_refreshed.sql), when nothing they were computed from was
    written since `margin_seconds` before that refresh started (sql/identity_last_write.sql); else None."""
    if RECENT_WRITES.within(tenant, identity, margin_seconds):
        return None  # written here within the margin: its row is stale for certain
    parameters = {"tenant": tenant, "identity": identity, "as_of": as_of}
    # Two independent reads of a few granules each: side by side.
    rows = store.beside(lambda: dicts(store.client.query(load("identity_reputation_refreshed"), parameters=parameters)))
    last_write = store.client.query(formula_query("identity_last_write"), parameters=parameters).result_rows[0][0]
    if not (found := rows.result()):
        return None
    row = found[0]
    # DateTime64(3, 'UTC') comes back naive: both sides read as UTC.
    if row.pop("computed_at") - timedelta(seconds=margin_seconds) <= last_write:
        return None
    return {**row, "last_run_at": as_utc(row["last_run_at"])}


def explanation_rows(store: Store, tenant: str, identity: str, as_of: date) -> list[dict[str, Any]]:
    """The parts of sql/identity_explain.sql (event_type, category, reference, capped rows) for one identity."""
    parameters = {"tenant": tenant, "identity": identity, "as_of": as_of, **bound_weights(store, tenant)}
    return dicts(store.client.query(formula_query("identity_explain", weights=BOUND_WEIGHTS), parameters=parameters))


def list_identities(
    store: Store,
    tenant: str,
    *,
    limit: int,
    sort: str = "overall",
    descending: bool = True,
    min_confidence: float = 0.0,
    prefix: str = "",
    q: str = "",
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The fleet as its last refresh computed it (sql/identities_list.sql): each identity's reputation and
    its runs over the same window."""
    if sort not in IDENTITY_SORTS:
        raise ValueError(f"sort must be one of {', '.join(IDENTITY_SORTS)}")
    parameters = {
        "tenant": tenant,
        "sort": sort,
        "descending": descending,
        "min_confidence": min_confidence,
        "prefix": prefix,
        "q": q,
        "limit": limit,
        "offset": offset,
    }
    rows = dicts(store.client.query(load("identities_list"), parameters=parameters))
    for row in rows:
        row["computed_at"] = as_utc(row["computed_at"])
        row["last_run_at"] = as_utc(row["last_run_at"])
    return rows


def identity_days(
    store: Store, tenant: str, identities: Sequence[str], first: date, last: date
) -> dict[str, list[dict[str, Any]]]:
    """Per identity, what its finalized runs say per day over [first, last] (sql/identity_days.sql): runs,
    execution errors, unsafe verdicts and the mean trust, days with runs only, oldest first."""
    parameters = {"tenant": tenant, "identities": list(identities), "first": first, "last": last}
    found: dict[str, list[dict[str, Any]]] = {identity: [] for identity in identities}
    for row in dicts(store.client.query(load("identity_days"), parameters=parameters)):
        found[row.pop("identity")].append(row)
    return found


def identity_activity(store: Store, tenant: str, identity: str, first: date, last: date) -> dict[str, Any] | None:
    """What the identity's finalized runs say over [first, last] (sql/identity_activity.sql); None when it has
    no run then."""
    parameters = {"tenant": tenant, "identity": identity, "first": first, "last": last}
    rows = dicts(store.client.query(load("identity_activity"), parameters=parameters))
    return {**rows[0], "last_run_at": as_utc(rows[0]["last_run_at"])} if rows else None


def repair_daily_sums(store: Store) -> None:
    """Makes reputation_daily_types equal again to the events stored, for the days of the last two years
    (sql/repair_daily_types.sql; a sum that is right is left alone, so a second repair writes nothing).
    The embedded engine writes an insert's part of reputation_events, then its view's part: a kill in
    between leaves the events stored and the daily sums without them, and the retry of the write skips
    the stored ids, so they would stay missing. Run before the store serves, after such a crash. The next
    refresh of the fleet's table then recomputes every identity (a repaired sum is written to no identity's
    events)."""
    store.client.command(load("repair_daily_types"))
    writer.full_refresh_request(store, datetime.now(UTC))


def refresh_scores(store: Store) -> None:
    """Runs the fleet table's refresh now and waits for it (tests, `repute demo`, the CLI): the identities
    written to since the last one, or every identity (sql/definitions/reputation_scores_mv.sql)."""
    store.client.command("SYSTEM REFRESH VIEW reputation_scores_mv")
    store.client.command("SYSTEM WAIT VIEW reputation_scores_mv")


def identity_exists(store: Store, tenant: str, identity: str) -> bool:
    """Whether the tenant has any reputation event or run for the identity."""
    result = store.client.query(
        "SELECT (SELECT count() FROM (SELECT 1 FROM reputation_events"
        " WHERE tenant = {tenant:String} AND identity = {identity:String} LIMIT 1))"
        " + (SELECT count() FROM (SELECT 1 FROM runs"
        " WHERE tenant = {tenant:String} AND identity = {identity:String} LIMIT 1))",
        parameters={"tenant": tenant, "identity": identity},
    )
    return result.result_rows[0][0] > 0


def statement_evidence(store: Store, tenant: str, identity: str, first: date, as_of: date) -> list[dict[str, Any]]:
    """The identity's events that count in [first, as_of], in (timestamp, event_id) order
    (sql/statement_evidence.sql): what a signed statement commits to (SPEC §15)."""
    parameters = {"tenant": tenant, "identity": identity, "first": first, "as_of": as_of}
    rows = dicts(store.client.query(load("statement_evidence"), parameters=parameters))
    for row in rows:
        row["timestamp"] = as_utc(row["timestamp"])
    return rows
