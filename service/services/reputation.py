"""Reputation reads shaped for people and programs (API, CLI), and posted signals (SPEC §3.3).

Reported figures (scores, trends, confidence, mean trust) are rounded to vocab.REPORTED_DECIMALS, each
from its exact value: 89.00000000000001 reads 89.0, and a trend is not the difference of two rounded
scores. The store and the model keep the exact values.
"""

import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson

from service.errors import FieldError, NotFound
from service.reputation import model
from service.reputation.activity import activity, daily, top_failure
from service.reputation.explain import explanation
from service.reputation.model import CATEGORIES, LEGACY_SOURCE, ReputationEvent, reported, signal_uuid
from service.services.keys import Principal, is_operator
from service.store import keys as key_store
from service.store import reputation as reputation_store
from service.store import runs as run_store
from service.store.client import Store
from service.vocab import RunKind, Scope


def _figure(row: dict[str, Any] | None, name: str) -> float | None:
    return reported(row[name]) if row else None


def _categories(row: dict[str, Any] | None) -> dict[str, float | None]:
    return {c: _figure(row, c) for c in CATEGORIES}


def reputation_report(store: Store, tenant: str, identity: str, as_of: date) -> dict[str, Any] | None:
    """SPEC §7 for one identity, and what its runs of the same window say (service.reputation.activity);
    None when the tenant has never seen the identity. Read from the fleet table's row when nothing it was
    computed from changed since (the figures the formula gives; the formula's planning alone costs more than
    that read), else by the formula and its runs' sums over the window."""
    refreshed = reputation_store.refreshed_reputation(store, tenant, identity, as_of)
    if refreshed is not None:
        return _report(identity, as_of, refreshed, refreshed)  # its runs' figures are the window's sums
    first = as_of - timedelta(days=model.WINDOW_DAYS - 1)
    # Two independent reads of a few granules each: side by side.
    runs = store.beside(lambda: reputation_store.identity_activity(store, tenant, identity, first, as_of))
    row = reputation_store.identity_reputation(store, tenant, identity, as_of)
    window = runs.result()
    if row is None and window is None and not reputation_store.identity_exists(store, tenant, identity):
        return None
    return _report(identity, as_of, row, window)


def _report(identity: str, as_of: date, row: dict[str, Any] | None, runs: dict[str, Any] | None) -> dict[str, Any]:
    failures = dict(sorted(row["failures"].items())) if row else {}
    return {
        "identity": identity,
        "as_of": as_of,
        "window_days": model.WINDOW_DAYS,
        "overall": _figure(row, "overall"),
        "categories": _categories(row),
        "confidence": _figure(row, "confidence") or 0.0,
        "events": row["events"] if row else 0,
        "positive_events": row["positive_events"] if row else 0,
        "negative_events": row["negative_events"] if row else 0,
        "failures": failures,
        "score_7d_ago": _figure(row, "score_7d_ago"),
        "score_30d_ago": _figure(row, "score_30d_ago"),
        "trend_7d": _figure(row, "trend_7d"),
        "trend_30d": _figure(row, "trend_30d"),
        **activity(runs),
    }


def explain(store: Store, tenant: str, identity: str, as_of: date) -> dict[str, Any] | None:
    """Why the identity's reputation is what it is at as_of (SPEC §7.1, service.reputation.explain);
    None when the tenant has never seen the identity."""
    rows = reputation_store.explanation_rows(store, tenant, identity, as_of)
    if not rows and not reputation_store.identity_exists(store, tenant, identity):
        return None
    explained = explanation(identity, as_of, rows)
    _describe_runs(store, tenant, explained["top_references"])
    return explained


RUN_REFERENCES = frozenset(RunKind)  # a run's events reference it by its kind


def _describe_runs(store: Store, tenant: str, references: list[dict[str, Any]]) -> None:
    """Each reference to a run names its primary failure, and a child run the multi-agent run it is part of
    (SPEC §3.5); null where there is none, and for references that are no run."""
    runs = [reference["reference_id"] for reference in references if reference["reference_type"] in RUN_REFERENCES]
    stored = run_store.parents_and_failures(store, tenant, runs) if runs else {}
    for reference in references:
        is_run = reference["reference_type"] in RUN_REFERENCES
        parent, failure = stored.get(reference["reference_id"], ("", "")) if is_run else ("", "")
        reference["parent_run_id"] = parent or None
        reference["primary_failure"] = failure or None


SPARKLINE_DAYS = 30


def fleet(store: Store, tenant: str, now: datetime, **filters: Any) -> dict[str, Any]:
    """The fleet's page: each identity's reputation, what its runs of the same 90 days say, and its runs
    of the last SPARKLINE_DAYS days by day."""
    rows = reputation_store.list_identities(store, tenant, **filters)
    today = now.date()
    first = today - timedelta(days=SPARKLINE_DAYS - 1)
    days = reputation_store.identity_days(store, tenant, [row["identity"] for row in rows], first, today)
    identities = [
        {
            "identity": row["identity"],
            "overall": reported(row["overall"]),
            "categories": _categories(row),
            "confidence": reported(row["confidence"]),
            "events": row["events"],
            "trend_7d": reported(row["trend_7d"]),
            "trend_30d": reported(row["trend_30d"]),
            "runs": row["runs"],
            "execution_errors": row["execution_errors"],
            "execution_error_share": reported(row["execution_error_share"]),
            "unsafe_runs": row["unsafe_runs"],
            "last_run_at": row["last_run_at"],
            "top_failure": top_failure(row["primary_failures"], row["primary_impacts"]),
            "last_30_days": daily(days[row["identity"]]),
            "computed_at": row["computed_at"],
        }
        for row in rows
    ]
    return {"identities": identities, "computed_at": max((r["computed_at"] for r in rows), default=None)}


def history(store: Store, tenant: str, identity: str, days: int, today: date) -> dict[str, Any] | None:
    """Per day: runs, mean trust of quality runs (execution errors excluded), and reputation as of that day;
    one read of each (the runs' figures beside the reputation's)."""
    first = today - timedelta(days=days - 1)
    series_days = [first + timedelta(days=offset) for offset in range(days)]
    runs = store.beside(lambda: reputation_store.identity_days(store, tenant, [identity], first, today))
    scores = reputation_store.identity_reputations(store, tenant, identity, series_days)
    activity_by_day = {day["day"]: day for day in runs.result()[identity]}
    if not scores and not activity_by_day and not reputation_store.identity_exists(store, tenant, identity):
        return None
    series = []
    for day in series_days:
        row, activity_of_day = scores.get(day), activity_by_day.get(day)
        series.append(
            {
                "day": day,
                "runs": activity_of_day["runs"] - activity_of_day["execution_errors"] if activity_of_day else 0,
                "mean_trust": reported(activity_of_day["mean_trust"]) if activity_of_day else None,
                "reputation": _figure(row, "overall"),
                "confidence": _figure(row, "confidence") or 0.0,
            }
        )
    return {"identity": identity, "days": series}


# How far after its arrival a posted signal's timestamp may lie (SPEC §7.1 "Time"): clocks differ a little.
SIGNAL_LEAD = timedelta(minutes=5)
CLIENT_EVENT_ID = "client_event_id"  # the attribute keeping the client's own event_id (SPEC §7.1 "Ids")


def _client_id(signal: dict[str, Any], field: str) -> str | None:
    given = signal.get("event_id")
    if not given:
        return None
    try:
        return str(uuid.UUID(str(given)))
    except ValueError as exc:
        raise FieldError(f"{field}.event_id", "event_id must be a UUID") from exc


def _timestamp(signal: dict[str, Any], now: datetime, max_age: timedelta | None, field: str) -> datetime:
    """The signal's time, its arrival `now` when absent: at most SIGNAL_LEAD after it and, unless
    `max_age` is None (an admin's import), at most `max_age` before it."""
    given = signal.get("timestamp")
    if given is None:
        return now
    timestamp = (given if given.tzinfo else given.replace(tzinfo=UTC)).astimezone(UTC)
    if timestamp > now + SIGNAL_LEAD:
        minutes = SIGNAL_LEAD // timedelta(minutes=1)
        raise FieldError(f"{field}.timestamp", f"timestamp is more than {minutes} minutes after the signal's arrival")
    if max_age is not None and timestamp < now - max_age:
        raise FieldError(
            f"{field}.timestamp",
            f"timestamp is more than {max_age.days} days (REPUTE_SIGNAL_MAX_AGE_DAYS) before the signal's arrival;"
            " only a key with the admin scope may post older signals (imports)",
        )
    return timestamp


def signal_event(
    tenant: str, source: str, signal: dict[str, Any], now: datetime, max_age: timedelta | None, field: str
) -> ReputationEvent:
    """A posted signal as a reputation event, in the signals' own id space (model.signal_uuid): its id is
    derived from the client's event_id, kept in attributes['client_event_id'], else from the content (and
    the timestamp when one is given), so re-posting the same signal is a no-op."""
    attributes = dict(signal.get("attributes") or {})
    if CLIENT_EVENT_ID in attributes:
        raise FieldError(f"{field}.attributes.{CLIENT_EVENT_ID}", "set by the server from event_id: send event_id")
    client_id = _client_id(signal, field)
    content = {k: v for k, v in signal.items() if k != "event_id" and v is not None}
    canonical = orjson.dumps(content, option=orjson.OPT_SORT_KEYS, default=str).decode()
    if client_id is not None:
        attributes[CLIENT_EVENT_ID] = client_id
    return ReputationEvent(
        event_id=signal_uuid(tenant, source, client_id, canonical),
        timestamp=_timestamp(signal, now, max_age, field),
        identity=signal["identity"],
        category=signal["category"],
        event_type=signal["event_type"],
        score_delta=float(signal["score_delta"]),
        confidence=float(signal.get("confidence", 1.0)),
        weight=float(signal.get("weight", 1.0)),
        reference_type=signal.get("reference_type", ""),
        reference_id=signal.get("reference_id", ""),
        attributes=attributes,
    )


def post_signals(store: Store, principal: Principal, signals: list[dict[str, Any]], now: datetime) -> dict[str, Any]:
    """Stores signals from other systems (SPEC §3.3, §7.1) as coming from the key that posted them (the
    server's word, never the client's), arriving `now`. A timestamp more than REPUTE_SIGNAL_MAX_AGE_DAYS
    before the arrival is refused unless the key has the admin scope; every one more than 5 minutes
    after it. `accepted` counts the events stored, capped ones included; ids already stored are
    duplicates, not errors."""
    source = principal.key_id
    max_age = None if Scope.ADMIN in principal.scopes else timedelta(days=store.settings.signal_max_age_days)
    events = [
        signal_event(principal.tenant, source, signal, now, max_age, f"events[{i}]") for i, signal in enumerate(signals)
    ]
    outcome = reputation_store.insert_signals(store, principal.tenant, source, events, now)
    return {
        "accepted": len(outcome.stored),
        "duplicates": len(outcome.duplicates),
        "capped": len(outcome.capped),
        "event_ids": [str(e.event_id) for e in events],
    }


def sources(store: Store, tenant: str) -> dict[str, Any]:
    """The tenant's sources and their credibility (SPEC §7.1, GET /v1/sources)."""
    return {"sources": reputation_store.list_sources(store, tenant)}


def source_tenant(store: Store, principal: Principal, source: str) -> str:
    """The tenant whose credibility for `source` (a key id, or `legacy`) this admin sets: the key's own
    tenant. Another tenant's key answers as an unknown one, unless the caller is the operator."""
    if source == LEGACY_SOURCE:
        return principal.tenant
    key = key_store.get_key(store, source)
    if key is None or (key["tenant"] != principal.tenant and not is_operator(principal)):
        raise NotFound(f"key {source!r}")
    return str(key["tenant"])


def set_source_credibility(
    store: Store, principal: Principal, source: str, credibility: float, now: datetime
) -> dict[str, Any]:
    """An admin's credibility for a source (PUT /v1/sources/{key_id}); it applies to every score at once."""
    tenant = source_tenant(store, principal, source)
    try:
        reputation_store.set_credibility(store, tenant, source, credibility, now)
    except ValueError as exc:
        raise FieldError("credibility", str(exc)) from exc
    return {"source": source, "credibility": credibility, "updated_at": now}
