"""A quick look at one tenant's service: the store answers, the schema is migrated, what it holds."""

from typing import Any

from service import __version__
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import discover, pending


def tenant_status(store: Store, tenant: str) -> dict[str, Any]:
    """Raises StoreUnavailable when ClickHouse does not answer."""
    store.ping()
    waiting = pending(store)
    runs, identities, last_finalized_at = run_store.tenant_counts(store, tenant)
    return {
        "version": __version__,
        "tenant": tenant,
        "store": {"engine": "embedded" if store.settings.embedded else "server", "reachable": True},
        "migrations": {"applied": len(discover()) - len(waiting), "pending": waiting},
        "runs": runs,
        "identities": identities,
        "last_finalized_at": last_finalized_at,
    }
