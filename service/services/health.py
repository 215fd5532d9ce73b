"""Readiness: ClickHouse answers and every migration is applied."""

from service.store.client import Store
from service.store.migrate import pending


def pending_migrations(store: Store) -> list[str]:
    """The migrations not applied yet; raises StoreUnavailable when ClickHouse does not answer."""
    store.ping()
    return pending(store)
