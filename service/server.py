"""`repute serve`: uvicorn on the app. In embedded mode the server owns the store: a second server on
the same data directory refuses to start, and the owner records its URL there (once it listens) so
CLI commands go through it instead of fighting over the store's lock."""

import logging
import signal
from types import FrameType

import uvicorn

from service.api.app import create_app
from service.client.server_file import remove_own_server_file, write_server_file
from service.errors import StoreLocked, StoreUnavailable
from service.settings import Settings
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT

log = logging.getLogger("repute.server")


def _announce_admin_key(settings: Settings, created_key: str | None) -> None:
    path = settings.data_dir / ADMIN_KEY_FILE
    if created_key:
        print(f"admin key (tenant {DEFAULT_TENANT!r}, shown once; also in {path}):\n{created_key}", flush=True)
    elif path.exists():
        print(f"admin key: {path.read_text().strip()}  (from {path})", flush=True)


def _leave_through_finally(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # the status a shell reports for a process ended by that signal


def serve(settings: Settings, host: str | None, port: int | None) -> None:
    host = host or settings.host
    port = port or settings.port
    app = create_app(settings)
    holder = app.state.store_holder
    try:
        holder.get()
    except StoreLocked as exc:
        raise SystemExit(f"error: {exc}") from None
    except StoreUnavailable as exc:
        log.warning("starting without the store (%s); requests get 503 until it is back", exc)
    created = holder.first_admin_key
    _announce_admin_key(settings, created.key if created else None)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False))
    listening = server.config.bind_socket()
    record = write_server_file(settings.data_dir, f"http://{host}:{port}") if settings.embedded else None
    # uvicorn shuts down gracefully on SIGTERM, then raises it again, whose default action would end
    # the process before the record is removed.
    signal.signal(signal.SIGTERM, _leave_through_finally)
    try:
        server.run(sockets=[listening])
    finally:
        if record is not None:
            remove_own_server_file(record)
