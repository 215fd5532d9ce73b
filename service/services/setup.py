"""Bringing a store up to date: pending migrations, then the settings the store keeps (the reputation
model's half-life, which every read takes from the store so the API, the fleet table, the alerts and
Grafana agree). Every process that opens a store for writing calls this once."""

from service.store.client import Store
from service.store.migrate import migrate
from service.store.reputation import sync_half_life


def prepare_store(store: Store) -> list[str]:
    """Applies pending migrations and puts the configured half-life in force; the migrations applied."""
    applied = migrate(store)
    sync_half_life(store, store.settings)
    return applied
