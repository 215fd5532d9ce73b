"""`repute serve`: uvicorn on the app. In embedded mode the server owns the store: a second server on
the same data directory refuses to start, and the owner records its URL there and in the user's
registry (once it listens; service.client.server_file) so CLI commands, from any directory, go through
it instead of fighting over the store's lock. On a ClickHouse server it may run
several worker processes (the service keeps no state outside ClickHouse)."""

import errno
import logging
import signal
import socket
from types import FrameType

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from service import __version__
from service.api.access_log import configure_access_log
from service.api.app import create_app
from service.client.server_file import register_server, remove_own_server_file, write_server_file
from service.collector import tune_for_serving
from service.errors import MigrationError, StoreLocked, StoreUnavailable
from service.settings import Settings, get_settings
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT

log = logging.getLogger("repute.server")
EMBEDDED_WORKERS_REFUSED = (
    "--workers needs a ClickHouse server (REPUTE_CLICKHOUSE_URL): the embedded store allows one process"
)


class CannotServe(Exception):
    """The server cannot start as asked (--workers on the embedded store, a store another process owns
    or that cannot be migrated): the CLI says why in one line and exits as for any refused request."""


def worker_app() -> FastAPI:
    """One worker process's app (`uvicorn --factory`), on the settings of the environment."""
    configure_access_log()
    app = create_app(get_settings())
    tune_for_serving()
    return app


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's listening socket, bound (as uvicorn binds it) before anything else is done, so a port
    in use is one line before a store is opened or a key made; raises CannotServe. TCP_NODELAY is set on
    it, which the connections it accepts inherit: uvicorn makes its socket with protocol 0, so asyncio left
    Nagle's algorithm on for those connections (it sets TCP_NODELAY on IPPROTO_TCP sockets only), and the
    body of a response, sent after its headers, waited for the client's delayed ACK on every request."""
    listening = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        raise CannotServe(_cannot_listen(host, port, exc)) from None
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listening.set_inheritable(True)  # for --workers' processes
    return listening


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        why = f"port {port} is in use on {host}"
    else:
        why = f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return f"{why}; choose another with REPUTE_PORT (or --port)"


def _leave_through_finally(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # the status a shell reports for a process ended by that signal


def banner(url: str) -> str:
    return f"Repute {__version__} on {url}\n  UI        {url}/ui/\n  API docs  {url}/docs\n  API       {url}/v1"


def serve(settings: Settings, host: str | None, port: int | None, workers: int = 1) -> None:
    if workers > 1 and settings.embedded:
        raise CannotServe(EMBEDDED_WORKERS_REFUSED)
    host = host or settings.host
    port = port or settings.port
    listening = listening_socket(host, port)
    app = create_app(settings)
    holder = app.state.store_holder
    try:
        holder.get()
    except (StoreLocked, MigrationError) as exc:
        listening.close()
        raise CannotServe(str(exc)) from None
    except StoreUnavailable as exc:
        log.warning("starting without the store (%s); requests get 503 until it is back", exc)
    created = holder.first_admin_key
    if created is not None:  # shown once, when created: logs of later starts never hold it
        path = settings.data_dir / ADMIN_KEY_FILE
        print(f"admin key (tenant {DEFAULT_TENANT!r}, shown once; also in {path}):\n{created.key}", flush=True)
    url = f"http://{host}:{port}"
    configure_access_log()
    if workers > 1:
        holder.close()  # migrated and keyed once here; each worker opens its own clients
        print(banner(url), flush=True)
        config = uvicorn.Config(
            "service.server:worker_app", factory=True, workers=workers, host=host, port=port, log_level="info",
            access_log=False,
        )  # fmt: skip
        Multiprocess(config, sockets=[listening]).run()
        return
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False))
    print(banner(url), flush=True)
    # Where the CLI finds this server: in its data directory, and in the user's registry from anywhere else.
    records = (
        [write_server_file(settings.data_dir, url), register_server(settings.data_dir, url)]
        if settings.embedded
        else []
    )
    # uvicorn shuts down gracefully on SIGTERM, then raises it again, whose default action would end
    # the process before the record is removed.
    signal.signal(signal.SIGTERM, _leave_through_finally)
    tune_for_serving()
    try:
        server.run(sockets=[listening])
    finally:
        for record in records:
            remove_own_server_file(record)
