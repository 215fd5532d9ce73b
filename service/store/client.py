"""One way to reach ClickHouse: clickhouse-connect, for the embedded engine (chdb://) and servers alike."""

import contextlib
import re
import threading
from pathlib import Path
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
        raise StoreUnavailable(f"cannot open ClickHouse at {dsn}: {one_line(exc)}") from exc
    except (ClickHouseError, OSError) as exc:
        raise StoreUnavailable(f"cannot reach ClickHouse: {one_line(exc)}") from exc


class Store:
    """Hands out one client per thread (clients are not safe to share across threads) on one database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dsn = settings.dsn
        self.database = _database_of(self.dsn, settings.database)
        self._local = threading.local()
        self._clients: list[Client] = []
        self._lock = threading.Lock()
        self._ensure_database()

    def _ensure_database(self) -> None:
        if self.dsn.startswith("chdb://"):
            path = Path(self.dsn.removeprefix("chdb://"))
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnavailable(f"cannot create the embedded store at {path}: {exc.strerror or exc}") from exc
        bootstrap = _open(self.dsn, None)
        try:
            on_cluster = f" ON CLUSTER {self.settings.cluster}" if self.settings.cluster else ""
            bootstrap.command(f"CREATE DATABASE IF NOT EXISTS `{self.database}`{on_cluster} ENGINE = Atomic")
        except ClickHouseError as exc:
            raise StoreUnavailable(f"cannot open ClickHouse at {self.dsn}: {one_line(exc)}") from exc
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

    def ping(self) -> None:
        """Raises StoreUnavailable (or the driver's OperationalError) when ClickHouse does not answer."""
        self.client.query("SELECT 1")

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            with contextlib.suppress(Exception):  # best effort: the engine may already be gone
                client.close()
        self._local = threading.local()
