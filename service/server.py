"""`repute serve`: uvicorn on the app. In embedded mode it records its URL in the data directory so
CLI commands go through it instead of fighting over the store's lock."""

import logging

import uvicorn

from service import __version__
from service.api.access_log import configure_access_log
from service.api.app import create_app
from service.client.server_file import write_server_file
from service.errors import MigrationError, StoreLocked, StoreUnavailable
from service.settings import Settings
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT

log = logging.getLogger("repute.server")


def _announce_admin_key(settings: Settings, created_key: str | None) -> None:
    path = settings.data_dir / ADMIN_KEY_FILE
    if created_key:
        print(f"admin key (tenant {DEFAULT_TENANT!r}, shown once; also in {path}):\n{created_key}", flush=True)
    elif path.exists():
        print(f"admin key: {path.read_text().strip()}  (from {path})", flush=True)


def banner(url: str) -> str:
    return f"Repute {__version__} on {url}\n  UI        {url}/ui/\n  API docs  {url}/docs\n  API       {url}/v1"


def serve(settings: Settings, host: str | None, port: int | None) -> None:
    host = host or settings.host
    port = port or settings.port
    app = create_app(settings)
    holder = app.state.store_holder
    try:
        holder.get()
    except (StoreLocked, MigrationError) as exc:
        raise SystemExit(f"error: {exc}") from None
    except StoreUnavailable as exc:
        log.warning("starting without the store (%s); requests get 503 until it is back", exc)
    created = holder.first_admin_key
    _announce_admin_key(settings, created.key if created else None)
    url = f"http://{host}:{port}"
    print(banner(url), flush=True)
    server_file = write_server_file(settings.data_dir, url) if settings.embedded else None
    configure_access_log()
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)
    finally:
        if server_file is not None:
            server_file.unlink(missing_ok=True)
