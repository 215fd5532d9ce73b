"""Signed reputation statements (SPEC §15): one identity's reputation at a day, with the evidence it stands
on, signed with the tenant's key, for a verifier who trusts nothing but the issuer's published key."""

from datetime import date, datetime, timedelta
from typing import Any

from service.errors import NotFound
from service.reputation import model
from service.services.reputation import reputation_report
from service.settings import Settings
from service.statements import envelope
from service.statements.statement import evidence_row, payload, proof
from service.store import reputation as reputation_store
from service.store import signing_keys
from service.store.client import Store


def _evidence(store: Store, tenant: str, identity: str, as_of: date) -> tuple[list[dict[str, Any]], list[bytes]]:
    first = as_of - timedelta(days=model.WINDOW_DAYS - 1)
    events = reputation_store.statement_evidence(store, tenant, identity, first, as_of)
    return events, [evidence_row(event) for event in events]


def _model_in_force(store: Store, settings: Settings, tenant: str, sources: set[str]) -> dict[str, Any]:
    """The formula's version and constants, and what weighs this evidence at read time: the half-life, the
    credibility of each of its sources, the daily cap on posted signals."""
    credibility = {row["source"]: row["credibility"] for row in reputation_store.list_sources(store, tenant)}
    return {
        **model.parameters(),
        "half_life_days": reputation_store.half_life(store),
        "credibility": {source: credibility.get(source, model.DEFAULT_CREDIBILITY) for source in sorted(sources)},
        "signals_per_source_per_day": settings.signals_per_source_per_day,
    }


def statement(
    store: Store, settings: Settings, tenant: str, identity: str, as_of: date, now: datetime
) -> dict[str, Any]:
    """The DSSE envelope of the identity's statement at `as_of`, signed by the tenant's key in force (made
    on first use). The same store and as_of give the same bytes."""
    report = reputation_report(store, tenant, identity, as_of)
    if report is None:
        raise NotFound(f"identity {identity!r}")
    events, rows = _evidence(store, tenant, identity, as_of)
    in_force = _model_in_force(store, settings, tenant, {event["source"] for event in events})
    key = signing_keys.signing_key(settings, tenant, now)
    assert key.private is not None
    return envelope.sign(payload(tenant, identity, as_of, report, in_force, rows), key.private)


def inclusion(store: Store, tenant: str, identity: str, as_of: date, event_id: str) -> dict[str, Any]:
    """An event's canonical row and its inclusion proof in the identity's statement at `as_of`."""
    events, rows = _evidence(store, tenant, identity, as_of)
    index = next((i for i, event in enumerate(events) if str(event["event_id"]) == event_id), None)
    if index is None:
        raise NotFound(f"event {event_id!r} among the events that count for {identity!r} on {as_of}")
    return {"as_of": as_of.isoformat(), "subject": identity, **proof(rows, index)}


def public_keys(settings: Settings) -> dict[str, Any]:
    """Every tenant's statement keys, retired ones included, as a JWK set."""
    return {"keys": [key.jwk() for key in signing_keys.published(settings)]}


def rotate(settings: Settings, tenant: str, now: datetime) -> dict[str, Any]:
    return signing_keys.rotate(settings, tenant, now).jwk()
