"""Bringing a store up to date: pending migrations, then the settings the store keeps (the reputation
model's half-life, which every read takes from the store so the API, the fleet table, the alerts and
Grafana agree), and after a crash of the embedded engine the daily reputation sums made whole again.
Every process that opens a store for writing calls this once."""

import logging

from service.store.client import Store
from service.store.migrate import migrate
from service.store.reputation import repair_daily_sums, sync_half_life

log = logging.getLogger("repute.setup")


def prepare_store(store: Store) -> list[str]:
    """Applies pending migrations, puts the configured half-life in force and, when the last engine on the
    store was killed, repairs the daily sums; the migrations applied."""
    applied = migrate(store)
    sync_half_life(store, store.settings)
    if store.after_crash:
        log.warning("the embedded store was not closed cleanly: repairing the daily reputation sums")
        repair_daily_sums(store)
    return applied
