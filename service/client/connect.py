"""Which API a command talks to (`open_client`): a running server over HTTP, or the app in this process."""

import os
from pathlib import Path

import httpx

from service.client.api import TIMEOUT_SECONDS, ApiClient, ApiError, NoStore
from service.client.local import in_process_client
from service.client.server_file import operator_key, registered_servers, running_server
from service.settings import Settings


def _server_client(url: str, key: str | None, data_dir: Path | None) -> ApiClient:
    if key is None:
        raise ApiError(f"a server runs at {url} but no key: set REPUTE_API_KEY")
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT_SECONDS)
    return ApiClient(http, url=url, data_dir=data_dir)


def _given_server(url: str) -> ApiClient:
    """The server a user named: its key from REPUTE_API_KEY, else from its data directory when this user
    runs it."""
    url = url.rstrip("/")
    mine = next((record for record in registered_servers() if record.url == url), None)
    key = os.environ.get("REPUTE_API_KEY") or (operator_key(mine.data_dir) if mine else None)
    if key is None:
        raise ApiError(f"no key for the server at {url}: set REPUTE_API_KEY")
    return _server_client(url, key, mine.data_dir if mine else None)


def _registered_server() -> ApiClient | None:
    """The one server this user runs, wherever its data directory is; None when none runs."""
    servers = registered_servers()
    if len(servers) > 1:
        listed = ", ".join(f"{record.url} ({record.data_dir})" for record in servers)
        raise ApiError(f"several servers run: {listed}; choose one with REPUTE_URL or REPUTE_DATA_DIR")
    if not servers:
        return None
    [record] = servers
    return _server_client(record.url, operator_key(record.data_dir), record.data_dir)


def _holds_a_store(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def open_client(settings: Settings, url: str | None = None, *, existing: bool = False) -> ApiClient:
    """Where a command's requests go, the first that applies:
    1. `url` (`repute --url`), else REPUTE_URL: that server;
    2. the live server that owns the configured embedded store (its data directory's record);
    3. when neither REPUTE_DATA_DIR nor REPUTE_CLICKHOUSE_URL is set and the default data directory holds
       no store: the one server this user runs, found from its per-user record (several: ApiError);
    4. the app in this process on the configured store; with `existing`, NoStore when that store does
       not exist yet, since a command that only reads must not create one."""
    url = url or settings.url
    if url:
        return _given_server(url)
    path = settings.embedded_path
    if path is None:
        return _in_process(settings)
    own = running_server(settings.data_dir)
    if own:
        return _server_client(own, operator_key(settings.data_dir), settings.data_dir)
    if _holds_a_store(path):
        return _in_process(settings)
    if not {"data_dir", "clickhouse_url"} & settings.model_fields_set and (found := _registered_server()):
        return found
    if existing:
        where = settings.data_dir.resolve() if settings.clickhouse_url is None else path
        raise NoStore(
            f"no Repute store at {where} and no server running: start one with `make run` in the clone (or"
            " `repute serve`), or point the CLI at one with REPUTE_URL or REPUTE_DATA_DIR"
        )
    return _in_process(settings)


def _in_process(settings: Settings) -> ApiClient:
    return in_process_client(settings)
