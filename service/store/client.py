"""One way to reach ClickHouse: clickhouse-connect, for the embedded engine (chdb://) and servers alike."""

import contextlib
import fcntl
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.datatypes.base import ClickHouseType
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError, ProgrammingError

from service.errors import StoreLocked, StoreUnavailable
from service.priority import carried, lowered
from service.settings import Settings
from service.store import cluster


def database_of(settings: Settings) -> str:
    """The database the service uses: the server URL's path, else the `database` setting."""
    if settings.embedded:
        return settings.database
    return urlsplit(settings.dsn).path.strip("/") or settings.database


def create_database(database: str, cluster: str | None) -> str:
    on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
    return f"CREATE DATABASE IF NOT EXISTS `{database}`{on_cluster} ENGINE = Atomic"


def _server_dsn(dsn: str) -> str:
    parts = urlsplit(dsn)
    return parts._replace(path="").geturl()


_EXCEPTION = re.compile(r"Code: (\d+)\. DB::Exception: ")
_INNER_ERROR = "e.what() = "
_VERSION = re.compile(r"\s*\(version [^()]*(\([^()]*\))?[^()]*\)\.?\s*$")


def one_line(exc: BaseException) -> str:
    """A ClickHouse error as one readable line: the reason without the `Code: N. DB::Exception:` prefix,
    the stack trace or the version, and the code at the end; any other error as its first line."""
    text = str(exc).strip() or type(exc).__name__
    found = _EXCEPTION.search(text)
    if found is None:
        return text.splitlines()[0]
    reason = text[found.end() :].strip().split(", Stack trace")[0].splitlines()[0]
    reason = reason.split(_INNER_ERROR, 1)[-1]
    reason = _VERSION.sub("", reason).rstrip(". ")
    return f"{reason} (ClickHouse error {found.group(1)})"


def _owner_pid(status: Path) -> int | None:
    """The PID the embedded engine wrote in its status file ("PID: 1234" on the first line)."""
    try:
        first = status.read_text().splitlines()[0]
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    label, _, pid = first.partition(":")
    return int(pid) if label == "PID" and pid.strip().isdigit() else None


def _lock_held(status: Path) -> bool:
    try:
        fd = os.open(status, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the probe's lock, if it took one
    return False


def _locked_by_another_process(path: Path) -> bool:
    """Whether another live process runs the embedded engine on `path`. The engine holds an flock on
    `<path>/status` and writes its PID there; opening a locked path fails with a bare "Error
    initializing EmbeddedServer" while the lock error goes to stderr, so the lock is looked at first.
    The probe only runs when the file names another process (ours holds the lock legitimately)."""
    status = path / "status"
    owner = _owner_pid(status)
    return owner is not None and owner != os.getpid() and _lock_held(status)


def _left_by_a_crash(path: Path) -> bool:
    """Whether the last engine on `path` ended without closing it: a clean close removes `<path>/status`,
    so a status file that names another process, which no longer holds its lock, was left by a crash."""
    status = path / "status"
    owner = _owner_pid(status)
    return owner is not None and owner != os.getpid() and not _lock_held(status)


def _locked(path: Path) -> StoreLocked:
    return StoreLocked(f"the embedded store at {path} is in use by another process (a running `repute serve`?)")


def _without_credentials(dsn: str) -> str:
    parts = urlsplit(dsn)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


MIB = 1024 * 1024


def engine_options(settings: Settings) -> dict[str, int]:
    """The embedded engine's server settings, bounding its memory (README "Memory"): its total (queries, caches
    and merges), and the cache of index marks, whose default of 5 GiB grew with every part a read touched."""
    return {
        "max_server_memory_usage": settings.engine_memory_mib * MIB,
        "mark_cache_size": settings.engine_cache_mib * MIB,
    }


def _open(
    dsn: str, database: str | None, settings: dict[str, Any] | None = None, engine: dict[str, int] | None = None
) -> Client:
    if dsn.startswith("chdb://"):
        return _open_embedded(Path(dsn.removeprefix("chdb://")), database, engine)
    try:
        return clickhouse_connect.get_client(
            dsn=_server_dsn(dsn), database=database, autogenerate_session_id=False, settings=settings
        )
    except ProgrammingError as exc:
        raise StoreUnavailable(f"cannot open ClickHouse at {_without_credentials(dsn)}: {one_line(exc)}") from exc
    except (ClickHouseError, OSError) as exc:
        raise StoreUnavailable(f"cannot reach ClickHouse: {one_line(exc)}") from exc


def _open_embedded(path: Path, database: str | None, engine: dict[str, int] | None) -> Client:
    if _locked_by_another_process(path):
        raise _locked(path)
    try:
        return clickhouse_connect.get_client(dsn=f"chdb://{path}", database=database, chdb_options=engine)
    except (ClickHouseError, OSError) as exc:
        if _locked_by_another_process(path):  # it started between the look and the open
            raise _locked(path) from exc
        raise StoreUnavailable(f"cannot open the embedded store at {path}: {one_line(exc)}") from exc


# Writes that run side by side (`Store.together`). The embedded engine serializes calls per client
# handle only, so statements on distinct clients (one per thread) run in parallel there as on a server.
_WRITERS = 4
# On the embedded engine the service's reads and writes share the same cores: the engine threads running a
# write that gives way (a background job's, a flooding tenant's: service.priority.lowered) drop to the lowest
# OS priority while it runs (nice 19), so neither a read nor another tenant's write is stuck behind them.
_GIVING_WAY = {"os_thread_priority": 19}
# Reads started beside the caller's (`Store.beside`): threads of their own, so that they never queue behind
# the writes of `together`.
_READERS = 4

T = TypeVar("T")


def done(value: T) -> Future[T]:
    """A future that already holds `value`."""
    future: Future[T] = Future()
    future.set_result(value)
    return future


class Store:
    """Hands out one client per thread (clients are not safe to share across threads) on one database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dsn = settings.dsn
        self.database = database_of(settings)
        self._session_settings = cluster.CLIENT_SETTINGS if settings.cluster else None
        self._engine = engine_options(settings) if settings.embedded else None
        self._local = threading.local()
        self._clients: list[Client] = []
        self._lock = threading.Lock()
        self._writers: ThreadPoolExecutor | None = None
        self._column_types: dict[tuple[str, tuple[str, ...]], Sequence[ClickHouseType]] = {}
        self._readers: ThreadPoolExecutor | None = None
        self._idle_readers = threading.BoundedSemaphore(_READERS)
        # An embedded engine killed mid-insert may have written a table's part and not its views' (see
        # service.store.reputation.repair_daily_sums); a server completes an insert whose client died.
        self.after_crash = self.settings.embedded and _left_by_a_crash(Path(self.dsn.removeprefix("chdb://")))
        self._ensure_database()

    def _ensure_database(self) -> None:
        if self.dsn.startswith("chdb://"):
            path = Path(self.dsn.removeprefix("chdb://"))
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the embedded store at {path}: {exc.strerror or exc}") from exc
        bootstrap = _open(self.dsn, None, self._session_settings, self._engine)
        try:
            bootstrap.command(create_database(self.database, self.settings.cluster))
        except ClickHouseError as exc:
            raise StoreUnavailable(
                f"cannot open ClickHouse at {_without_credentials(self.dsn)}: {one_line(exc)}"
            ) from exc
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
            client = _open(self.dsn, self.database, self._session_settings, self._engine)
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
        """One INSERT of `rows`; on the embedded engine at the lowest priority when its job gives way (_GIVING_WAY).
        The columns' types are asked of ClickHouse on a table's first insert only (a DESCRIBE, which was a
        query of its own before every insert)."""
        priority = _GIVING_WAY if self.dsn.startswith("chdb://") and lowered() else {}
        key = (table, tuple(column_names))
        context = self.client.create_insert_context(
            table, column_names, column_types=self._column_types.get(key), settings={**priority, **(settings or {})}
        )
        self._column_types[key] = context.column_types
        try:
            self.client.insert(data=rows, context=context)
        finally:
            # clickhouse-connect's insert context keeps a bound method of its own, a cycle: it and the rows it
            # holds would wait for the cyclic collector, whose pass over a large run's rows holds the
            # interpreter's lock for every thread. Emptied, it is freed with its rows here.
            vars(context).clear()

    def mutable(self, table: str) -> str:
        """`table` as a mutation names it on this deployment (service.store.cluster.mutable)."""
        return cluster.mutable(table, self.settings.cluster)

    def forget_column_types(self) -> None:
        """After a schema change (migrations): the next insert into each table asks for its columns again.
        A change made by another process (a rolling upgrade on a server) is seen once this one migrates or
        restarts; until then ClickHouse converts what it is sent where the types allow."""
        self._column_types.clear()

    def together(self, *calls: Callable[[], object]) -> None:
        """Runs independent statements at once, each on a client of its own; returns once all are done,
        raising the first error (a failed statement never leaves another one still running)."""
        first, *others = calls
        pending: list[Future[object]] = [self._writer_pool().submit(carried(call)) for call in others]
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

    def beside(self, call: Callable[[], T]) -> Future[T]:
        """Starts a read on a client of its own while the caller runs another, so that two independent
        reads take the time of the longer one instead of the sum. When all _READERS threads are busy the
        read runs now, in the caller, so it never waits for a thread (an error is then raised here)."""
        if not self._idle_readers.acquire(blocking=False):
            return done(call())

        def read() -> T:
            try:
                return call()
            finally:
                self._idle_readers.release()  # before the result is set: whoever has it finds the thread idle

        try:
            return self._reader_pool().submit(read)
        except BaseException:
            self._idle_readers.release()
            raise

    def _reader_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._readers is None:
                self._readers = ThreadPoolExecutor(_READERS, thread_name_prefix="repute-read")
            return self._readers

    def ping(self) -> None:
        """Raises StoreUnavailable (or the driver's OperationalError) when ClickHouse does not answer."""
        self.client.query("SELECT 1")

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
            pools = [pool for pool in (self._writers, self._readers) if pool is not None]
            self._writers = self._readers = None
        for pool in pools:
            pool.shutdown(wait=True)
        for client in clients:
            with contextlib.suppress(Exception):  # best effort: the engine may already be gone
                client.close()
        self._local = threading.local()
