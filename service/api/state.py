"""The app's handle on the store: opened (and migrated) on first need, so a server whose ClickHouse
is down still starts, answers /healthz, and returns 503 until the store is back."""

import threading
from datetime import UTC, datetime

from service.services.keys import CreatedKey, ensure_admin_key
from service.services.setup import prepare_store
from service.settings import Settings
from service.store.client import Store


class StoreHolder:
    def __init__(self, settings: Settings, store: Store | None = None) -> None:
        self.settings = settings
        self._store = store
        self._owned = store is None
        self._lock = threading.Lock()
        self.first_admin_key: CreatedKey | None = None

    def get(self) -> Store:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    store = Store(self.settings)
                    try:
                        prepare_store(store)
                        self.first_admin_key = ensure_admin_key(store, self.settings.data_dir, datetime.now(UTC))
                    except BaseException:
                        store.close()  # an embedded store left open would keep its data directory locked
                        raise
                    self._store = store
        return self._store

    @property
    def opened(self) -> bool:
        return self._store is not None

    def close(self) -> None:
        if self._store is not None and self._owned:
            self._store.close()
            self._store = None
