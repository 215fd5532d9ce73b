"""One way to reach ClickHouse: clickhouse-connect, for the embedded engine (chdb://) and servers alike."""

import contextlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError, ProgrammingError

from service.errors import StoreLocked, StoreUnavailable
from service.settings import Settings


def _database_of(dsn: str, default: str) -> str:
    if dsn.startswith("chdb://"):
        return default
    path = urlsplit(dsn).path.strip("/")
    return path or default


def _server_dsn(dsn: str) -> str:
    parts = urlsplit(dsn)
    return parts._replace(path="").geturl()


def _open(dsn: str, database: str | None) -> Client:
    try:
        if dsn.startswith("chdb://"):
            return clickhouse_connect.get_client(dsn=dsn, database=database)
        return clickhouse_connect.get_client(dsn=_server_dsn(dsn), database=database, autogenerate_session_id=False)
    except ProgrammingError as exc:
        if "Cannot lock file" in str(exc):
            raise StoreLocked(
                f"the embedded store at {dsn.removeprefix('chdb://')} is in use by another process"
                " (a running `repute serve`?)"
            ) from exc
        raise StoreUnavailable(f"cannot open ClickHouse at {dsn}: {exc}") from exc
    except (ClickHouseError, OSError) as exc:
        raise StoreUnavailable(f"cannot reach ClickHouse: {exc}") from exc


# Writes that run side by side (`Store.together`). The embedded engine serializes calls per client
# handle only, so statements on distinct clients (one per thread) run in parallel there as on a server.
_WRITERS = 4
# On the embedded engine the service's reads and writes share the same cores: the engine threads running a
# write drop to the lowest OS priority while it runs (nice 19), so a read is never stuck behind them.
_EMBEDDED_WRITE_SETTINGS = {"os_thread_priority": 19}


class Store:
    """Hands out one client per thread (clients are not safe to share across threads) on one database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dsn = settings.dsn
        self.database = _database_of(self.dsn, settings.database)
        self._local = threading.local()
        self._clients: list[Client] = []
        self._lock = threading.Lock()
        self._writers: ThreadPoolExecutor | None = None
        self._ensure_database()

    def _ensure_database(self) -> None:
        if self.dsn.startswith("chdb://"):
            Path(self.dsn.removeprefix("chdb://")).mkdir(parents=True, exist_ok=True)
        bootstrap = _open(self.dsn, None)
        try:
            on_cluster = f" ON CLUSTER {self.settings.cluster}" if self.settings.cluster else ""
            bootstrap.command(f"CREATE DATABASE IF NOT EXISTS `{self.database}`{on_cluster} ENGINE = Atomic")
        finally:
            if not self.dsn.startswith("chdb://"):
                bootstrap.close()
            else:
                self._track(bootstrap)

    def _track(self, client: Client) -> None:
        with self._lock:
            self._clients.append(client)

    @property
    def client(self) -> Client:
        client = getattr(self._local, "client", None)
        if client is None:
            client = _open(self.dsn, self.database)
            self._local.client = client
            self._track(client)
        return client

    def insert(
        self,
        table: str,
        rows: Sequence[Sequence[Any]],
        column_names: Sequence[str],
        settings: dict[str, Any] | None = None,
    ) -> None:
        """One INSERT of `rows`; on the embedded engine at write priority (see _EMBEDDED_WRITE_SETTINGS)."""
        priority = _EMBEDDED_WRITE_SETTINGS if self.settings.embedded else {}
        self.client.insert(table, rows, column_names=column_names, settings={**priority, **(settings or {})})

    def together(self, *calls: Callable[[], object]) -> None:
        """Runs independent statements at once, each on a client of its own; returns once all are done,
        raising the first error (a failed statement never leaves another one still running)."""
        first, *others = calls
        pending: list[Future[object]] = [self._writer_pool().submit(call) for call in others]
        try:
            first()
        finally:
            wait(pending)
        for future in pending:
            future.result()

    def _writer_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._writers is None:
                self._writers = ThreadPoolExecutor(_WRITERS, thread_name_prefix="repute-store")
            return self._writers

    def ping(self) -> None:
        """Raises StoreUnavailable (or the driver's OperationalError) when ClickHouse does not answer."""
        self.client.query("SELECT 1")

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
            writers, self._writers = self._writers, None
        if writers is not None:
            writers.shutdown(wait=True)
        for client in clients:
            with contextlib.suppress(Exception):  # best effort: the engine may already be gone
                client.close()
        self._local = threading.local()
