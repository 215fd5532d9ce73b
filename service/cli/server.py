"""`repute serve`, `migrate`, `status` and `demo`: the server and its store."""

from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from service.cli.base import NEGATIVE, OK, JsonFlag, app, fail, given_url, out, store_errors
from service.settings import get_settings
from service.terminal import print_json, print_table


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(metavar="HOST", help="bind address (REPUTE_HOST)")] = None,
    port: Annotated[int | None, typer.Option(metavar="PORT", help="port (REPUTE_PORT)")] = None,
    workers: Annotated[
        int, typer.Option(metavar="N", min=1, help="processes (a ClickHouse server only: embedded is one)")
    ] = 1,
) -> None:
    """Serve the REST API (migrates the store first; prints the admin key on first start)."""
    from service.server import CannotServe
    from service.server import serve as run_server

    try:
        run_server(get_settings(), host, port, workers)
    except CannotServe as exc:
        fail(str(exc))


@app.command()
def migrate(
    print_only: Annotated[
        bool,
        typer.Option(
            "--print", help="print the whole schema's DDL as rendered for these settings (a cluster's too); apply none"
        ),
    ] = False,
) -> None:
    """Apply pending ClickHouse migrations (idempotent)."""
    from service.client.server_file import running_server
    from service.services.setup import prepare_store as apply
    from service.store.client import Store
    from service.store.migrate import every_statement

    settings = get_settings()
    if print_only:
        with store_errors():
            for statement in every_statement(settings):
                out.print(statement if statement.startswith("--") else f"{statement};\n", markup=False, highlight=False)
        return
    if settings.embedded and (url := running_server(settings.data_dir)):
        out.print(f"the server at {url} owns this store and migrated it at start; nothing to do")
        return
    with store_errors():
        store = Store(settings)
        try:
            applied = apply(store)
        finally:
            store.close()
    out.print(f"applied: {', '.join(applied)}" if applied else "schema is up to date")


@app.command()
def status(as_json: JsonFlag = False) -> None:
    """Is everything up: the server (if one owns the store), the store, the migrations, what the store
    holds and when a run was last finalized. Exit 0 healthy, 1 not."""
    from clickhouse_connect.driver.exceptions import ClickHouseError

    from service.client import ApiError, NoStore, open_client
    from service.errors import MigrationError, StoreUnavailable
    from service.store.client import one_line
    from service.terminal import quiet_library_logs

    quiet_library_logs()
    settings = get_settings()
    report: dict[str, Any] = {"server": {"running": False, "url": None}}
    where = settings.dsn
    try:
        with open_client(settings, given_url(), existing=True) as client:
            report["server"] = {"running": client.url is not None, "url": client.url}
            if client.url is not None:
                where = f"data directory {client.data_dir}" if client.data_dir else f"served by {client.url}"
            report |= client.json("GET", "/v1/status")
    except (StoreUnavailable, MigrationError, ApiError, ClickHouseError, NoStore) as exc:
        report |= {"store": {"reachable": False, "error": one_line(exc)}}
    healthy = report["store"]["reachable"] and not report["migrations"]["pending"]
    if as_json:
        print_json(report)
    else:
        print_table(out, ("check", "state"), _status_rows(report, where))
    raise typer.Exit(OK if healthy else NEGATIVE)


def _status_rows(report: dict[str, Any], where: str) -> list[tuple[str, str]]:
    server = report["server"]
    running = f"running at {server['url']} (UI {server['url']}/ui/)" if server["running"] else "not running"
    store = report["store"]
    if not store["reachable"]:
        return [("server", running), ("store", f"unreachable: {store['error']}")]
    pending = report["migrations"]["pending"]
    last = report["last_finalized_at"]
    return [
        ("server", running),
        ("store", f"reachable ({store['engine']}: {where})"),
        ("migrations", f"{report['migrations']['applied']} applied, " + (", ".join(pending) or "none") + " pending"),
        ("tenant", report["tenant"]),
        ("runs", f"{report['runs']} ({report['identities']} identities)"),
        ("last finalize", f"{last[:19].replace('T', ' ')} UTC" if last else "never"),
        ("version", report["version"]),
    ]


@app.command()
def demo(
    days: Annotated[int, typer.Option(metavar="N", min=14, max=365, help="days of history, ending now")] = 30,
    identities: Annotated[int, typer.Option(metavar="N", min=2, max=1000, help="agents in the fleet")] = 24,
    seed: Annotated[int, typer.Option(metavar="N", help="the same seed gives the same fleet")] = 7,
    tenant: Annotated[str, typer.Option(metavar="TENANT")] = "default",
) -> None:
    """Fill the configured store with a synthetic fleet, so the dashboards and alerts have something to show."""
    from service.client.server_file import running_server
    from service.errors import FieldError
    from service.ids import check_id
    from service.services.demo import DemoOptions, seed_demo
    from service.services.setup import prepare_store as apply
    from service.store.client import Store

    try:
        check_id(tenant, "tenant")
    except FieldError as exc:
        fail(str(exc))
    settings = get_settings()
    if settings.embedded and (url := running_server(settings.data_dir)):
        fail(f"the server at {url} owns this store: stop it, run `repute demo`, then start it again")
    with store_errors():
        store = Store(settings)
        try:
            apply(store)
            options = DemoOptions(days=days, identities=identities, seed=seed)
            summary = seed_demo(store, tenant, options, datetime.now(UTC), settings.quality_pass_threshold)
        finally:
            store.close()
    out.print(summary.line(), markup=False, highlight=False, soft_wrap=True)
