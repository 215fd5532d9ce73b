"""`repute serve`: uvicorn on the app. In embedded mode it records its URL in the data directory so
CLI commands go through it instead of fighting over the store's lock. On a ClickHouse server it may run
several worker processes (the service keeps no state outside ClickHouse)."""

import gc
import logging

import uvicorn
from fastapi import FastAPI

from service.api.app import create_app
from service.client.server_file import write_server_file
from service.errors import MigrationError, StoreLocked, StoreUnavailable
from service.settings import Settings, get_settings
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT

log = logging.getLogger("repute.server")
# A batch of runs allocates 100,000s of objects that live for the whole request; at the default
# threshold (700) the collector would walk them again and again (about a quarter of a batch's CPU).
GC_YOUNG_THRESHOLD = 50_000
EMBEDDED_WORKERS_REFUSED = (
    "error: --workers needs a ClickHouse server (REPUTE_CLICKHOUSE_URL): the embedded store allows one process"
)


def _tune_gc() -> None:
    """Startup objects (modules, the app) live as long as the process: freeze them out of every collection."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def worker_app() -> FastAPI:
    """One worker process's app (`uvicorn --factory`), on the settings of the environment."""
    app = create_app(get_settings())
    _tune_gc()
    return app


def _announce_admin_key(settings: Settings, created_key: str | None) -> None:
    path = settings.data_dir / ADMIN_KEY_FILE
    if created_key:
        print(f"admin key (tenant {DEFAULT_TENANT!r}, shown once; also in {path}):\n{created_key}", flush=True)
    elif path.exists():
        print(f"admin key: {path.read_text().strip()}  (from {path})", flush=True)


def serve(settings: Settings, host: str | None, port: int | None, workers: int = 1) -> None:
    if workers > 1 and settings.embedded:
        raise SystemExit(EMBEDDED_WORKERS_REFUSED)
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
    if workers > 1:
        holder.close()  # migrated and keyed once here; each worker opens its own clients
        uvicorn.run(
            "service.server:worker_app", factory=True, workers=workers, host=host, port=port, log_level="info",
            access_log=False,
        )  # fmt: skip
        return
    server_file = write_server_file(settings.data_dir, f"http://{host}:{port}") if settings.embedded else None
    _tune_gc()
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", access_log=False)
    finally:
        if server_file is not None:
            server_file.unlink(missing_ok=True)
