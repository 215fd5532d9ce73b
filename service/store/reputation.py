"""SQL for reputation events and scores.

Idempotency holds at insert time: the daily materialized view folds every inserted block, so a
duplicate that reached the table would be double-counted forever. An event id is unique per tenant and
identity: events whose (identity, id) the tenant has stored already are skipped, under a process lock,
and each block carries a deduplication token made of the tenant and the (identity, id) pairs it holds,
which the table and its MV honour. That token only matches a block repeating one already stored (a
retry racing from another process), so every event reported stored is stored, and one tenant's ids can
never shadow another's.
"""

import hashlib
import threading
from collections.abc import Sequence
from datetime import date
from typing import Any
from uuid import UUID

import orjson

from service.reputation.model import ReputationEvent, combine
from service.store.client import Store
from service.store.queries import load
from service.store.rows import as_utc, dicts

EVENT_COLUMNS = (
    "tenant", "event_id", "timestamp", "identity", "category", "event_type", "score_delta",
    "confidence", "weight", "reference_type", "reference_id", "attributes",
)  # fmt: skip
_insert_lock = threading.Lock()


EventKey = tuple[str, UUID]


def _key(event: ReputationEvent) -> EventKey:
    return event.identity, event.event_id


def _unique(events: Sequence[ReputationEvent]) -> list[ReputationEvent]:
    firsts: dict[EventKey, ReputationEvent] = {}
    for event in events:
        firsts.setdefault(_key(event), event)
    return list(firsts.values())


def _stored_keys(store: Store, tenant: str, events: Sequence[ReputationEvent]) -> set[EventKey]:
    result = store.client.query(
        "SELECT identity, event_id FROM reputation_events WHERE tenant = {tenant:String}"
        " AND identity IN {identities:Array(String)} AND event_id IN {ids:Array(UUID)}",
        parameters={
            "tenant": tenant,
            "identities": sorted({e.identity for e in events}),
            "ids": sorted({str(e.event_id) for e in events}),
        },
    )
    return {(identity, event_id) for identity, event_id in result.result_rows} & {_key(e) for e in events}


def _deduplication_token(tenant: str, events: Sequence[ReputationEvent]) -> str:
    pairs = sorted([identity, str(event_id)] for identity, event_id in map(_key, events))
    return hashlib.sha256(orjson.dumps([tenant, pairs])).hexdigest()


def insert_events(store: Store, tenant: str, events: Sequence[ReputationEvent]) -> int:
    """Inserts the events whose (identity, id) the tenant has not stored yet; returns how many were new,
    all of them stored."""
    candidates = _unique(events)
    if not candidates:
        return 0
    with _insert_lock:
        known = _stored_keys(store, tenant, candidates)
        new = [e for e in candidates if _key(e) not in known]
        if not new:
            return 0
        store.client.insert(
            "reputation_events",
            [
                [tenant, e.event_id, e.timestamp, e.identity, e.category, e.event_type, e.score_delta,
                 e.confidence, e.weight, e.reference_type, e.reference_id, e.attributes]
                for e in new
            ],
            column_names=EVENT_COLUMNS,
            settings={
                "insert_deduplication_token": _deduplication_token(tenant, new),
                "deduplicate_blocks_in_dependent_materialized_views": 1,
            },
        )  # fmt: skip
    return len(new)


def identity_reputation(store: Store, tenant: str, identity: str, as_of: date) -> dict[str, Any] | None:
    """SPEC §7 for one identity on any day, from the daily aggregates; None when it has no event in the
    120 days the windows span."""
    parameters = {"tenant": tenant, "identity": identity, "as_of": as_of}
    return combine(dicts(store.client.query(load("identity_windows"), parameters=parameters)))


IDENTITY_SORTS = ("overall", "confidence", "trend_7d", "trend_30d", "events", "identity")


def list_identities(
    store: Store,
    tenant: str,
    *,
    sort: str = "overall",
    descending: bool = True,
    min_confidence: float = 0.0,
    prefix: str = "",
    limit: int = 100,
    offset: int = 0,
) -> list[dict[str, Any]]:
    if sort not in IDENTITY_SORTS:
        raise ValueError(f"sort must be one of {', '.join(IDENTITY_SORTS)}")
    parameters = {
        "tenant": tenant,
        "sort": sort,
        "descending": descending,
        "min_confidence": min_confidence,
        "prefix": prefix,
        "limit": limit,
        "offset": offset,
    }
    rows = dicts(store.client.query(load("identities_list"), parameters=parameters))
    for row in rows:
        row["computed_at"] = as_utc(row["computed_at"])
    return rows


def refresh_scores(store: Store) -> None:
    """Runs the refreshable view now and waits for it (tests, `repute demo`, the CLI)."""
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


def daily_trust(store: Store, tenant: str, identity: str, first: date, last: date) -> dict[date, tuple[int, float]]:
    result = store.client.query(
        load("identity_daily_trust"), parameters={"tenant": tenant, "identity": identity, "first": first, "last": last}
    )
    return {day: (runs, mean) for day, runs, mean in result.result_rows}
