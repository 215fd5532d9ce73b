"""The `repute` command line. Each command is thin: it parses options and calls a service module."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import orjson
import typer
from rich.console import Console
from rich.table import Column, Table

from service.settings import get_settings

if TYPE_CHECKING:
    from service.client import ApiClient

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Repute: agent run diagnosis and reputation.")
keys_app = typer.Typer(no_args_is_help=True, help="Manage API keys.")
app.add_typer(keys_app, name="keys")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


@app.callback()
def _root() -> None:
    """Repute: agent run diagnosis and reputation."""


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr and an exit code; never a traceback."""
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2, default=str).decode())
    sys.stdout.write("\n")


@contextmanager
def api() -> Iterator["ApiClient"]:
    """The API: a running server that owns this store, else the app in this process. A refusal is one
    line on stderr and exit 2; a store that cannot be opened too."""
    from service.client import ApiError, open_client
    from service.errors import MigrationError, StoreUnavailable

    try:
        client = open_client(get_settings())
    except (StoreUnavailable, MigrationError, ApiError) as exc:
        fail(str(exc))
    try:
        yield client
    except ApiError as exc:
        fail(str(exc))
    finally:
        client.close()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="bind address (REPUTE_HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="port (REPUTE_PORT)")] = None,
) -> None:
    """Serve the REST API (migrates the store first; prints the admin key on first start)."""
    from service.server import serve as run_server

    run_server(get_settings(), host, port)


@app.command()
def migrate() -> None:
    """Apply pending ClickHouse migrations (idempotent)."""
    from service.client.server_file import running_server
    from service.errors import MigrationError, StoreUnavailable
    from service.services.setup import prepare_store as apply
    from service.store.client import Store

    settings = get_settings()
    if settings.embedded and (url := running_server(settings.data_dir)):
        out.print(f"the server at {url} owns this store and migrated it at start; nothing to do")
        return
    try:
        store = Store(settings)
        try:
            applied = apply(store)
        finally:
            store.close()
    except (StoreUnavailable, MigrationError) as exc:
        fail(str(exc))
    out.print(f"applied: {', '.join(applied)}" if applied else "schema is up to date")


@app.command()
def diagnose(
    file: Annotated[Path, typer.Argument(help="a session file (JSON array, run object or NDJSON); '-' for stdin")],
    text: Annotated[bool, typer.Option("--text", help="a readable report instead of JSON")] = False,
) -> None:
    """Diagnose a run offline and print the canonical diagnosis JSON (SPEC section 4)."""
    from service.diagnosis import InputError, parse_run
    from service.diagnosis import diagnose as diagnose_events
    from service.outcome import OutcomeInputError, classify_execution
    from service.run_report import run_text_report

    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        run = parse_run(data)
        result = diagnose_events(run.events)
        if text:  # the text report leads with the run's execution outcome (SPEC section 6)
            threshold = get_settings().quality_pass_threshold
            outcome = classify_execution(
                run.execution, run.events, result.trust_score, threshold, readiness=result.readiness_level
            )
    except InputError as exc:
        fail(f"{file}: {exc.located()}")
    except OutcomeInputError as exc:
        fail(f"{file}: {exc.field}: {exc}")
    sys.stdout.write(run_text_report(result, outcome) if text else result.canonical_json().decode() + "\n")


@app.command()
def judge(
    file: Annotated[Path, typer.Argument(help="OTLP JSONL log (the Collector's file exporter)")],
    session: Annotated[str | None, typer.Option(help="session.id (default: the session that started last)")] = None,
    masque: Annotated[str | None, typer.Option(help="name to report (default: the session's identity)")] = None,
) -> None:
    """Score one session of an OTLP log (SPEC section 5) and print it as YAML."""
    from service.judge import OTLPDecodeError, SessionNotFound, judge_log_file

    identity_attributes = get_settings().otlp_identity_attributes
    try:
        judgement = judge_log_file(file, session, masque=masque, identity_attributes=identity_attributes)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    except (OTLPDecodeError, SessionNotFound) as exc:
        fail(str(exc))
    if judgement.rejected:
        err.print(f"warning: skipped {judgement.rejected} unreadable log records", markup=False, soft_wrap=True)
    sys.stdout.write(judgement.score.to_yaml())


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="session files, directories of them, OTLP JSONL files")],
    identity: Annotated[str | None, typer.Option(help="identity for session files that name none")] = None,
    batch_size: Annotated[int, typer.Option(min=1, max=5000)] = 200,
) -> None:
    """Store, finalize and diagnose runs from files; bad files are reported and skipped."""
    from service.client.ingest import ingest_paths

    with api() as client:
        summary = ingest_paths(client, paths, identity, batch_size, out, err)
    out.print(summary.line())
    if summary.failed and not summary.stored and not summary.existing:
        raise typer.Exit(1)


@app.command("runs")
def list_runs(
    identity: Annotated[str, typer.Option()] = "",
    suite: Annotated[str, typer.Option()] = "",
    readiness: Annotated[str, typer.Option()] = "",
    execution_status: Annotated[str, typer.Option("--execution-status")] = "",
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="machine-stable JSON")] = False,
) -> None:
    """List runs, newest first."""
    filters = {"identity": identity, "suite": suite, "readiness": readiness, "execution_status": execution_status}
    with api() as client:
        params = {name: value for name, value in filters.items() if value}
        rows = client.json("GET", "/v1/runs", params={**params, "limit": limit})["runs"]
    if as_json:
        print_json(rows)
        return
    ids = (Column("run id", no_wrap=True), Column("identity", no_wrap=True))
    table = Table(*ids, "trust", "readiness", "primary failure", "tool calls", "status")
    for row in rows:
        table.add_row(
            row["run_id"],
            row["identity"],
            "" if row["trust_score"] is None else str(row["trust_score"]),
            row["readiness_level"],
            row["primary_failure"] or "",
            str(row["tool_calls"]),
            row["execution_status"] or row["status"],
        )
    out.print(table)


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


@app.command()
def reputation(
    identity: Annotated[str, typer.Argument()],
    as_of: Annotated[str | None, typer.Option("--as-of", help="YYYY-MM-DD (default today, UTC)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-stable JSON")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="what moved the score: event types, top runs")] = False,
) -> None:
    """An identity's 90-day reputation, confidence and trends."""
    try:
        day = date.fromisoformat(as_of) if as_of else datetime.now(UTC).date()
    except ValueError:
        fail(f"--as-of must be YYYY-MM-DD, got {as_of!r}")
    path = f"/v1/identities/{identity}/reputation" + ("/explain" if explain else "")
    with api() as client:
        found = client.json("GET", path, params={"as_of": day.isoformat()})
    if found is None:
        fail(f"no identity {identity!r}", 1)
    if as_json:
        print_json(found)
        return
    if explain:
        _print_explanation(found)
        return
    out.print(f"[bold]{identity}[/] as of {found['as_of']} (90 days)")
    out.print(f"overall {_fmt(found['overall'])}  confidence {found['confidence']:.2f}  events {found['events']}")
    for name, value in found["categories"].items():
        out.print(f"  {name}: {_fmt(value)}")
    out.print(f"trend 7d {_fmt(found['trend_7d'])}  trend 30d {_fmt(found['trend_30d'])}")
    for failure, count in found["failures"].items():
        out.print(f"  failure {failure}: {count}")


def _print_explanation(found: dict[str, Any]) -> None:
    out.print(f"[bold]{found['identity']}[/] as of {found['as_of']}: what moved the score over the last 7 days")
    for category, line in found["changes"].items():
        out.print(f"  {category}: {line}", highlight=False)
    table = Table("reference", "events", "Σ δ·c·w", title="references that moved the score most")
    for reference in found["top_references"]:
        name = f"{reference['reference_type']} {reference['reference_id']}".strip()
        table.add_row(name, str(reference["events"]), f"{reference['weighted_delta']:+.3f}")
    out.print(table)
    for capped in found["capped"]:
        out.print(f"  {capped['events']} events from source {capped['source']} over the daily cap: not counted")


@app.command()
def summary(
    suite: Annotated[str, typer.Option(help="the suite to summarise")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-stable JSON")] = False,
) -> None:
    """Suite summary: tasks after trial aggregation, execution errors kept apart from quality."""
    with api() as client:
        found = client.request("GET", f"/v1/suites/{suite}/summary", params={"format": "json" if as_json else "text"})
    if found is None:
        fail(f"no finalized run in suite {suite!r}", 1)
    if as_json:
        print_json(found.json())
    else:
        sys.stdout.write(found.text)


@app.command()
def gate(
    file: Annotated[Path | None, typer.Argument(help="a session file to diagnose offline ('-' for stdin)")] = None,
    run_id: Annotated[str | None, typer.Option("--run", help="a stored run instead of a file")] = None,
    min_trust: Annotated[int, typer.Option("--min-trust", min=0, max=100)] = 80,
    allow_review: Annotated[bool, typer.Option("--allow-review", help="accept review_recommended")] = False,
    suite: Annotated[str | None, typer.Option(help="with --max-execution-error-rate: the suite to check")] = None,
    max_error_rate: Annotated[
        float | None, typer.Option("--max-execution-error-rate", min=0.0, max=1.0, help="a suite's limit, 0..1")
    ] = None,
) -> None:
    """A CI/CD gate: exit 0 pass, 1 fail, 2 usage error; one line says why."""
    from service.diagnosis import InputError
    from service.gate import gate_run, gate_suite_errors, verdict_of_file

    checks = [file is not None, run_id is not None, max_error_rate is not None]
    if sum(checks) != 1:
        fail("give exactly one of FILE, --run ID, or --max-execution-error-rate R with --suite S")
    if max_error_rate is not None:
        if not suite:
            fail("--max-execution-error-rate needs --suite")
        with api() as client:
            found = client.json("GET", f"/v1/suites/{suite}/summary")
        if found is None:
            fail(f"no finalized run in suite {suite!r}")
        result = gate_suite_errors(found, max_error_rate)
    elif run_id is not None:
        with api() as client:
            run = client.json("GET", f"/v1/runs/{run_id}")
        if run is None:
            fail(f"no run {run_id!r}")
        result = gate_run(run, min_trust, allow_review)
    else:
        assert file is not None  # exactly one of the three was given
        verdict: dict[str, Any] = {}
        try:
            data = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
            verdict = verdict_of_file(data, get_settings().quality_pass_threshold)
        except OSError as exc:
            fail(f"cannot read {file}: {exc.strerror or exc}")
        except InputError as exc:
            fail(f"{file}: {exc.located()}")
        result = gate_run(verdict, min_trust, allow_review)
    out.print(result.message, markup=False, highlight=False)
    raise typer.Exit(0 if result.passed else 1)


@app.command()
def alerts(as_json: Annotated[bool, typer.Option("--json", help="machine-stable JSON")] = False) -> None:
    """Fleet degradation alerts firing now (thresholds: REPUTE_ALERT_* settings)."""
    with api() as client:
        found = client.json("GET", "/v1/alerts")
    if as_json:
        print_json(found)
        return
    if not found["alerts"]:
        out.print(f"no alert firing (evaluated at {found['evaluated_at']})")
        return
    table = Table("alert", "severity", "subject", "message")
    for alert in found["alerts"]:
        table.add_row(alert["alert"], alert["severity"], alert["subject"], alert["message"])
    out.print(table)


@app.command()
def demo(
    days: Annotated[int, typer.Option(min=14, max=365, help="days of history, ending now")] = 30,
    identities: Annotated[int, typer.Option(min=2, max=1000, help="agents in the fleet")] = 24,
    seed: Annotated[int, typer.Option(help="the same seed gives the same fleet")] = 7,
    tenant: Annotated[str, typer.Option()] = "default",
) -> None:
    """Fill the configured store with a synthetic fleet, so the dashboards and alerts have something to show."""
    from service.client.server_file import running_server
    from service.errors import FieldError, MigrationError, StoreUnavailable
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
    try:
        store = Store(settings)
        try:
            apply(store)
            options = DemoOptions(days=days, identities=identities, seed=seed)
            summary = seed_demo(store, tenant, options, datetime.now(UTC), settings.quality_pass_threshold)
        finally:
            store.close()
    except (StoreUnavailable, MigrationError) as exc:
        fail(str(exc))
    out.print(summary.line(), markup=False, highlight=False, soft_wrap=True)


@keys_app.command("create")
def keys_create(
    scopes: Annotated[list[str], typer.Option("--scope", help="ingest, read, admin (repeat)")],
    tenant: Annotated[str, typer.Option()] = "default",
    name: Annotated[str, typer.Option()] = "",
) -> None:
    """Create a key; the secret is shown once."""
    with api() as client:
        created = client.json("POST", "/v1/keys", json={"tenant": tenant, "scopes": scopes, "name": name})
    print_json(created)


@keys_app.command("list")
def keys_list() -> None:
    """List keys (never the secrets)."""
    with api() as client:
        print_json(client.json("GET", "/v1/keys")["keys"])


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument()]) -> None:
    """Revoke a key."""
    with api() as client:
        revoked = client.request("DELETE", f"/v1/keys/{key_id}") is not None
    if not revoked:
        fail(f"no active key {key_id!r}", 1)
    out.print(f"revoked {key_id}")


def main() -> None:
    app()
