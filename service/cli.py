"""The `repute` command line. Each command is thin: it parses options and calls a service module.

Exit codes, the same for every command: 0 done; 1 a negative answer (not found, a gate that fails, a
status that is not healthy); 2 the command could not do what was asked (a usage error, bad input, a
file that failed, a store or server that refused or could not be reached). Errors are one line on
stderr, never a traceback.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import orjson
import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand, TyperGroup

from service import __version__
from service.diagnosis.failure_types import FailureType
from service.settings import get_settings
from service.terminal import MISSING, print_json, print_table
from service.vocab import ExecutionStatus, IdentitySort, InputKind, Readiness, RunStatus, Scope

if TYPE_CHECKING:
    from service.client import ApiClient
    from service.diagnosis import Profile

OK, NEGATIVE, USAGE = 0, 1, 2


def _no_type_placeholders(params: list[Any]) -> list[Any]:
    """Help shows names, never type placeholders: a flag takes no value (Typer would print `<bool>`), and
    an argument's metavar already says what it is (Typer would add `<path>`)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        elif isinstance(param, TyperArgument):
            param.display_type_rich = _no_type  # type: ignore[method-assign]
    return params


def _no_type(ctx: Any) -> None:
    return None


class _Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _no_type_placeholders(super().get_params(ctx))


class _Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _no_type_placeholders(super().get_params(ctx))


class _DefaultCommandGroup(_Group):
    """A group whose arguments go to its first command when they name none of its commands:
    `repute reputation ID` is `repute reputation show ID` (an identity named like a command is given
    with `show`). `--help` alone is the group's."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [next(iter(self.commands)), *args]
        return super().parse_args(ctx, args)


class _Typer(typer.Typer):
    def command(self, *args: Any, **kwargs: Any) -> Any:
        return super().command(*args, cls=_Command, **kwargs)


def choice(enum: type[StrEnum], metavar: str, *names: str, help: str = "") -> Any:
    """An option with a fixed set of values: a short metavar, and the values listed in its help, where
    they wrap between values, never inside one."""
    listed = "one of " + ", ".join(enum)
    return typer.Option(*names, metavar=metavar, help=f"{help}; {listed}" if help else listed)


app = _Typer(cls=_Group, no_args_is_help=True, help="Repute: agent run diagnosis and reputation.")
keys_app = _Typer(cls=_Group, no_args_is_help=True, help="Manage API keys.")
app.add_typer(keys_app, name="keys")
reputation_app = _Typer(
    cls=_DefaultCommandGroup,
    no_args_is_help=True,
    help="An identity's reputation (`repute reputation ID` is short for `show ID`); `rebuild` (admin).",
)
app.add_typer(reputation_app, name="reputation")
profiles_app = _Typer(cls=_Group, no_args_is_help=True, help="Diagnosis profiles and where they apply (admin).")
app.add_typer(profiles_app, name="profiles")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="machine-stable JSON")]
WideFlag = Annotated[
    bool, typer.Option("--wide", help="one line per row, however long (else long cells wrap between words)")
]
CursorOption = Annotated[
    str | None, typer.Option(metavar="CURSOR", help="where the last listing stopped (its hint names it)")
]
AllFlag = Annotated[bool, typer.Option("--all", help="every row, page after page")]


def _print_version(wanted: bool) -> None:
    if wanted:
        out.print(f"repute {__version__}", highlight=False)
        raise typer.Exit()


# The server `--url` names for this invocation (None: found, see service.client.open_client).
_given_url: str | None = None


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", metavar="URL", help="the server to use (REPUTE_URL); default: the one that owns the store"
        ),
    ] = None,
) -> None:
    """Repute: agent run diagnosis and reputation."""
    global _given_url
    _given_url = url


def fail(message: str, code: int = USAGE) -> NoReturn:
    """One line on stderr and an exit code; never a traceback."""
    err.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def not_found(message: str) -> NoReturn:
    fail(message, NEGATIVE)


@contextmanager
def store_errors() -> Iterator[None]:
    """A store that cannot be opened, migrated or queried is one line and exit 2."""
    from clickhouse_connect.driver.exceptions import ClickHouseError

    from service.errors import MigrationError, StoreUnavailable
    from service.store.client import one_line

    try:
        yield
    except (StoreUnavailable, MigrationError) as exc:
        fail(str(exc))
    except ClickHouseError as exc:
        fail(f"the store failed: {one_line(exc)}")


@contextmanager
def api(creates: bool = False) -> Iterator["ApiClient"]:
    """The API: a running server that owns this store (service.client.open_client finds it), else the app
    in this process. A refusal is one line on stderr and exit 2; a store that cannot be opened too. A
    command that does not store anything (`creates` False) never creates a store: where none exists it
    says so and exits 1."""
    from service.client import ApiError, NoStore, open_client
    from service.terminal import quiet_library_logs

    quiet_library_logs()
    with store_errors():
        try:
            client = open_client(get_settings(), _given_url, existing=not creates)
        except ApiError as exc:
            fail(str(exc))
        except NoStore as exc:
            not_found(str(exc))
    try:
        yield client
    except ApiError as exc:
        fail(str(exc))
    finally:
        client.close()


def _read_input(file: Path) -> bytes:
    try:
        return sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")


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
def diagnose(
    file: Annotated[
        Path, typer.Argument(metavar="FILE", help="a session file (JSON array, run object or NDJSON); '-' for stdin")
    ],
    text: Annotated[bool, typer.Option("--text", help="a readable report instead of JSON")] = False,
    profile: Annotated[
        str | None,
        typer.Option(
            metavar="NAME|FILE",
            help="critiqor, long-session, or a JSON file of thresholds; default: the run's own, else critiqor",
        ),
    ] = None,
) -> None:
    """Diagnose a run offline and print the canonical diagnosis JSON (SPEC section 4)."""
    from service.diagnosis import InputError, built_in_profile, parse_run
    from service.diagnosis import diagnose as diagnose_events
    from service.outcome import OutcomeInputError, classify_execution
    from service.run_report import run_text_report

    chosen = _offline_profile(profile) if profile else None
    data = _read_input(file)
    try:
        run = parse_run(data)
        result = diagnose_events(run.events, chosen or built_in_profile(run.profile))
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


def _offline_profile(choice: str) -> "Profile":
    """--profile: a built-in profile, else a JSON file of thresholds (`name` optional: the file's stem)."""
    import orjson

    from service.api.schemas import ProfileFile
    from service.diagnosis import BUILT_IN
    from service.errors import ClientError
    from service.services.inputs import validated
    from service.services.profiles import profile_of

    if choice in BUILT_IN:
        return BUILT_IN[choice]
    path = Path(choice)
    if not path.is_file():
        fail(f"--profile: {choice!r} is neither a built-in profile ({', '.join(BUILT_IN)}) nor a file")
    try:
        document = orjson.loads(_read_input(path))
    except orjson.JSONDecodeError as exc:
        fail(f"--profile {choice}: not JSON: {exc}")
    if not isinstance(document, dict):
        fail(f"--profile {choice}: expected a JSON object of thresholds")
    try:
        given = validated(ProfileFile, document)
        assert isinstance(given, ProfileFile)
        return profile_of(given.name or path.stem, given.thresholds())
    except ClientError as exc:
        fail(f"--profile {choice}: {exc.located()}")


@app.command()
def judge(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="OTLP JSONL log (the Collector's file exporter)")],
    session: Annotated[
        str | None, typer.Option(metavar="SESSION_ID", help="session.id (default: the session that started last)")
    ] = None,
    masque: Annotated[
        str | None, typer.Option(metavar="NAME", help="name to report (default: the session's identity)")
    ] = None,
) -> None:
    """Score one session of an OTLP log (SPEC section 5) and print it as YAML."""
    from service.judge import OTLPDecodeError, SessionNotFound, judge_log_file

    identity_attributes = get_settings().otlp_identity_attributes
    try:
        judgement = judge_log_file(file, session, masque=masque, identity_attributes=identity_attributes)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    except (OTLPDecodeError, SessionNotFound) as exc:  # about the file given: an input error
        fail(str(exc))
    if judgement.rejected:
        err.print(f"warning: skipped {judgement.rejected} unreadable log records", markup=False, soft_wrap=True)
    sys.stdout.write(judgement.score.to_yaml())


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATHS", help="session files, directories of them, OTLP JSONL files")
    ],
    identity: Annotated[
        str | None, typer.Option(metavar="IDENTITY", help="identity for session files that name none")
    ] = None,
    batch_size: Annotated[int, typer.Option(metavar="N", min=1, max=5000, help="runs per request")] = 200,
) -> None:
    """Store, finalize and diagnose runs from files; a bad file is reported, the others are stored, and the
    exit code is 2 when any file failed."""
    from service.client.ingest import ingest_paths

    with api(creates=True) as client:
        summary = ingest_paths(client, paths, identity, batch_size, err)
    out.print(summary.line(), highlight=False)
    if summary.failed:
        raise typer.Exit(USAGE)


RUN_COLUMNS = ("run_id", "identity", "trust", "readiness", "primary_failure", "tool_calls", "outcome")
TREE_BRANCH = "└ "  # a child run's id, under its parent's (repute runs --tree)


def _run_cells(run: dict[str, Any]) -> tuple[Any, ...]:
    verdict = (run["trust_score"], run["readiness_level"], run["primary_failure"])
    return (run["run_id"], run["identity"], *verdict, run["tool_calls"], _outcome(run))


def _outcome(run: dict[str, Any]) -> str:
    """How a run ended, leading with an execution error's stage and reason."""
    if run["execution_status"] != ExecutionStatus.EXECUTION_ERROR:
        return (run["execution_status"] or run["status"]).replace("_", " ")
    where = "/".join(part for part in (run["failure_stage"], run["failure_reason_code"]) if part)
    return f"execution error ({where})" if where else "execution error"


@app.command("runs")
def list_runs(
    identity: Annotated[str | None, typer.Option(metavar="IDENTITY")] = None,
    suite: Annotated[str | None, typer.Option(metavar="SUITE")] = None,
    readiness: Annotated[Readiness | None, choice(Readiness, "READINESS")] = None,
    execution_status: Annotated[ExecutionStatus | None, choice(ExecutionStatus, "STATUS", "--execution-status")] = None,
    primary_failure: Annotated[FailureType | None, choice(FailureType, "FAILURE", "--primary-failure")] = None,
    status: Annotated[RunStatus | None, choice(RunStatus, "STATUS")] = None,
    limit: Annotated[int, typer.Option(metavar="N", min=1, max=1000, help="runs to list")] = 50,
    cursor: CursorOption = None,
    every: AllFlag = False,
    tree: Annotated[bool, typer.Option("--tree", help="each run with its agents' child runs under it")] = False,
    as_json: JsonFlag = False,
    wide: WideFlag = False,
) -> None:
    """List runs, newest first, a page at a time (the next page: --cursor, as the hint says; --all: every
    run). An execution error has no trust: it shows its stage and reason instead. With --tree, the runs of
    a multi-agent run's other agents (SPEC §3.5) are listed under it."""
    filters = {
        "identity": identity, "suite": suite, "readiness": readiness, "execution_status": execution_status,
        "primary_failure": primary_failure, "status": status,
    }  # fmt: skip
    with api() as client:
        params = {name: str(value) for name, value in filters.items() if value}
        rows, more = _pages(client, "/v1/runs", "runs", params, Page(limit, cursor, every))
        if tree:
            rows = [_with_children(client, row) for row in rows if not row["parent_run_id"]]
    if as_json:
        print_json(rows)
    else:
        cells = [cells for row in rows for cells in _tree_cells(row)]
        print_table(out, RUN_COLUMNS, cells, wide, ids=("run_id", "identity"))
    _more_hint(more, limit, "runs")


def _with_children(client: "ApiClient", row: dict[str, Any]) -> dict[str, Any]:
    children, _ = _pages(client, "/v1/runs", "runs", {"parent": row["run_id"]}, Page(LARGEST_PAGE, None, True))
    return {**row, "child_runs": children}


def _tree_cells(row: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The row's cells, then its child runs' (with --tree), each run id under its parent's."""
    children = [_run_cells(child) for child in row.get("child_runs", [])]
    return [_run_cells(row), *((TREE_BRANCH + cells[0], *cells[1:]) for cells in children)]


LARGEST_PAGE = 1000  # the API's largest page of runs: --all reads in pages of this size


@dataclass(frozen=True)
class Page:
    """Which part of a listing to print: `limit` rows from `cursor` (None: the first), or every row."""

    limit: int
    cursor: str | None
    every: bool


def _pages(
    client: "ApiClient", path: str, key: str, params: dict[str, str], page: Page
) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of a cursor-paged listing (GET `path`, rows under `key`) and the cursor of what is left
    (None: nothing is)."""
    rows: list[dict[str, Any]] = []
    cursor = page.cursor
    while True:
        limit = LARGEST_PAGE if page.every else page.limit
        answer = client.json("GET", path, params={**params, "limit": limit} | ({"cursor": cursor} if cursor else {}))
        rows += answer[key]
        cursor = answer["next_cursor"]
        if not (page.every and cursor):
            return rows, cursor


def _more_hint(cursor: str | None, limit: int, noun: str) -> None:
    """On stderr, so that a pipe or --json reads the rows alone."""
    if cursor:
        err.print(
            f"more {noun}: the next {limit} with --cursor {cursor} (and the same filters), or every one with --all",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _fmt(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def _day(text: str | None, option: str) -> date:
    try:
        return date.fromisoformat(text) if text else datetime.now(UTC).date()
    except ValueError:
        fail(f"{option} must be YYYY-MM-DD, got {text!r}")


@reputation_app.command("show")
def reputation_show(
    identity: Annotated[str, typer.Argument(metavar="IDENTITY")],
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="YYYY-MM-DD", help="default today, UTC")] = None,
    as_json: JsonFlag = False,
    explain: Annotated[bool, typer.Option("--explain", help="what moved the score: event types, top runs")] = False,
) -> None:
    """An identity's 90-day reputation, confidence and trends."""
    day = _day(as_of, "--as-of")
    path = f"/v1/identities/{identity}/reputation" + ("/explain" if explain else "")
    with api() as client:
        found = client.json("GET", path, params={"as_of": day.isoformat()})
    if found is None:
        not_found(f"no identity {identity!r}")
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
    out.print(
        f"runs {found['runs']}, execution errors {_errors_cell(found)}, unsafe {found['unsafe_runs']};"
        f" last run {_when(found['last_run_at'])}",
        highlight=False,
    )
    for failure, count in found["failures"].items():
        out.print(f"  failure {failure}: {count}" + (" (the most frequent)" if failure == found["top_failure"] else ""))


def _errors_cell(found: dict[str, Any]) -> str:
    """Execution errors with their share of the runs: "6 (50%)"."""
    share = found["execution_error_share"]
    return f"{found['execution_errors']}" + ("" if share is None else f" ({share:.0%})")


def _when(timestamp: str | None) -> str:
    return f"{timestamp[:16].replace('T', ' ')} UTC" if timestamp else MISSING


FLEET_COLUMNS = (
    "identity", "reputation", "confidence", "trend_7d", "runs", "execution_errors", "unsafe_runs", "top_failure",
    "last_run",
)  # fmt: skip


def _fleet_cells(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["identity"], _fmt(row["overall"]), f"{row['confidence']:.0%}", _fmt(row["trend_7d"]), row["runs"],
        _errors_cell(row), row["unsafe_runs"], row["top_failure"], _when(row["last_run_at"]),
    )  # fmt: skip


@app.command("fleet")
def list_fleet(
    sort: Annotated[IdentitySort, choice(IdentitySort, "COLUMN", help="the column to sort by")] = IdentitySort.OVERALL,
    descending: Annotated[
        bool, typer.Option("--desc", help="highest first (default: lowest, the worst first)")
    ] = False,
    limit: Annotated[int, typer.Option(metavar="N", min=1, max=10_000, help="identities to list")] = 100,
    cursor: CursorOption = None,
    every: AllFlag = False,
    as_json: JsonFlag = False,
    wide: WideFlag = False,
) -> None:
    """Every identity: its 90-day reputation, and what its runs of those days say (runs, execution errors and
    their share, unsafe verdicts, the most frequent failure, the last run), worst first. Scores refresh every
    minute."""
    params = {"sort": str(sort), "order": "desc" if descending else "asc"}
    with api() as client:
        rows, more = _pages(client, "/v1/identities", "identities", params, Page(limit, cursor, every))
    if as_json:
        print_json(rows)
    else:
        print_table(out, FLEET_COLUMNS, [_fleet_cells(row) for row in rows], wide, ids=("identity",))
    _more_hint(more, limit, "identities")


@reputation_app.command("rebuild")
def reputation_rebuild(
    tenant: Annotated[
        str | None, typer.Option(metavar="TENANT", help="default: the key's own; another: the operator only")
    ] = None,
    rediagnose: Annotated[
        bool, typer.Option("--rediagnose", help="diagnose the runs again under the diagnosis profiles in force")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Re-emit the finalized runs' reputation events under the current model (admin; idempotent, one
    tenant). Run it after upgrading from a version whose reputation model differed, and with --rediagnose
    after changing the diagnosis profiles."""
    params = {"tenant": tenant} if tenant else {}
    with api() as client:
        report = client.json("POST", "/v1/reputation/rebuild", params={**params, "rediagnose": rediagnose})
    if as_json:
        print_json(report)
        return
    rediagnosed = (
        f"{report['runs_rediagnosed']} re-diagnosed, {report['runs_without_events']} left as they were (their"
        " events are no longer stored); "
        if rediagnose
        else ""
    )
    out.print(
        f"tenant {report['tenant']}: {report['runs_examined']} finalized runs examined, {rediagnosed}"
        f"{report['runs_changed']} changed: {report['events_retracted']} events retracted,"
        f" {report['events_emitted']} emitted",
        highlight=False,
    )


def _print_explanation(found: dict[str, Any]) -> None:
    out.print(f"[bold]{found['identity']}[/] as of {found['as_of']}: what moved the score over the last 7 days")
    for category, line in found["changes"].items():
        out.print(f"  {category}: {line}", highlight=False)
    columns = ("reference_type", "reference_id", "event_type", "events", "weighted_delta", "points")
    rows = [[*(r[name] for name in columns[:-1]), round(r["points"], 1)] for r in found["top_references"]]
    print_table(out, columns, rows, ids=("reference_id",))
    for capped in found["capped"]:
        out.print(f"  {capped['events']} events from source {capped['source']} over the daily cap: not counted")


@app.command()
def summary(
    suite: Annotated[str, typer.Option(metavar="SUITE", help="the suite to summarise")],
    as_json: JsonFlag = False,
) -> None:
    """Suite summary: tasks after trial aggregation, execution errors kept apart from quality."""
    with api() as client:
        found = client.request("GET", f"/v1/suites/{suite}/summary", params={"format": "json" if as_json else "text"})
    if found is None:
        not_found(f"no finalized run in suite {suite!r}")
    if as_json:
        print_json(found.json())
    else:
        sys.stdout.write(found.text)


@app.command()
def gate(
    file: Annotated[
        Path | None, typer.Argument(metavar="FILE", help="a session file to diagnose offline ('-' for stdin)")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option("--run", metavar="RUN_ID", help="a stored run instead of a file")
    ] = None,
    min_trust: Annotated[int, typer.Option("--min-trust", metavar="N", min=0, max=100)] = 80,
    allow_review: Annotated[bool, typer.Option("--allow-review", help="accept review_recommended")] = False,
    suite: Annotated[
        str | None, typer.Option(metavar="SUITE", help="with --max-execution-error-rate: the suite to check")
    ] = None,
    max_error_rate: Annotated[
        float | None,
        typer.Option("--max-execution-error-rate", metavar="RATE", min=0.0, max=1.0, help="a suite's limit"),
    ] = None,
) -> None:
    """A CI/CD gate: exit 0 pass, 1 fail (or no such run or suite), 2 usage error; one line says why."""
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
            not_found(f"no finalized run in suite {suite!r}")
        result = gate_suite_errors(found, max_error_rate)
    elif run_id is not None:
        with api() as client:
            run = client.json("GET", f"/v1/runs/{run_id}")
        if run is None:
            not_found(f"no run {run_id!r}")
        result = gate_run(run, min_trust, allow_review)
    else:
        assert file is not None  # exactly one of the three was given
        data = _read_input(file)
        try:
            verdict = verdict_of_file(data, get_settings().quality_pass_threshold)
        except InputError as exc:
            fail(f"{file}: {exc.located()}")
        result = gate_run(verdict, min_trust, allow_review)
    out.print(result.message, markup=False, highlight=False)
    raise typer.Exit(OK if result.passed else NEGATIVE)


@app.command(context_settings={"ignore_unknown_options": True})
def record(
    command: Annotated[
        list[str], typer.Argument(metavar="CMD", help="the agent's command and its arguments, after --")
    ],
    identity: Annotated[
        str | None, typer.Option(metavar="IDENTITY", help="whose run it is; default: the script or program run")
    ] = None,
    suite: Annotated[str | None, typer.Option(metavar="SUITE")] = None,
    min_trust: Annotated[int, typer.Option("--min-trust", metavar="N", min=0, max=100)] = 80,
    allow_review: Annotated[bool, typer.Option("--allow-review", help="accept review_recommended")] = False,
    timeout: Annotated[
        float | None,
        typer.Option(metavar="SECONDS", min=0.001, help="stop the process after this long (an execution error)"),
    ] = None,
) -> None:
    """Run an agent and record what it prints as a run: each JSON line is one of its events, any other line
    a process_output event; a non-zero exit or a timeout is an execution error. The run is stored and
    diagnosed (by the server, else in the local store), and the exit code is the gate's: 0 pass, 1 fail."""
    from service.client.record import CannotStart, default_identity, record_process, run_body
    from service.gate import gate_run

    with api(creates=True) as client:
        try:
            recording = record_process(command, timeout)
        except CannotStart as exc:
            fail(str(exc))
        body = run_body(recording, identity or default_identity(command), suite)
        verdict = client.json("POST", "/v1/sessions", json=body)
    stopped = f" (stopped after {timeout:g} s)" if recording.timed_out else ""
    out.print(
        f"recorded run {verdict['run_id']}: {len(recording.events)} events, exit code {recording.exit_code}"
        f"{stopped}, {recording.duration_ms / 1000:.1f} s",
        markup=False,
        highlight=False,
    )
    result = gate_run(verdict, min_trust, allow_review)
    out.print(result.message, markup=False, highlight=False)
    raise typer.Exit(OK if result.passed else NEGATIVE)


@app.command()
def alerts(as_json: JsonFlag = False, wide: WideFlag = False) -> None:
    """Fleet degradation alerts firing now (thresholds: REPUTE_ALERT_* settings)."""
    with api() as client:
        found = client.json("GET", "/v1/alerts")
    if as_json:
        print_json(found)
        return
    if not found["alerts"]:
        err.print(f"no alert firing (evaluated at {found['evaluated_at']})", highlight=False)
        return
    columns = ("alert", "severity", "subject", "value", "baseline", "message")
    rows = [[alert[name] for name in columns] for alert in found["alerts"]]
    print_table(out, columns, rows, wide, ids=("subject",))


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
        with open_client(settings, _given_url, existing=True) as client:
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


@keys_app.command("create")
def keys_create(
    scopes: Annotated[list[Scope], choice(Scope, "SCOPE", "--scope", help="repeat for several")],
    tenant: Annotated[
        str | None, typer.Option(metavar="TENANT", help="default: the key's own; another: the operator only")
    ] = None,
    name: Annotated[str, typer.Option(metavar="NAME", help="what the key is for")] = "",
    as_json: JsonFlag = False,
) -> None:
    """Create a key; the secret is shown once."""
    body = {"scopes": [str(scope) for scope in scopes], "name": name} | ({"tenant": tenant} if tenant else {})
    with api(creates=True) as client:
        created = client.json("POST", "/v1/keys", json=body)
    if as_json:
        print_json(created)
        return
    out.print(f"key {created['id']} for tenant {created['tenant']} ({', '.join(created['scopes'])})", highlight=False)
    out.print(f"secret, shown once: {created['key']}", markup=False, highlight=False)


@keys_app.command("list")
def keys_list(as_json: JsonFlag = False, wide: WideFlag = False) -> None:
    """List keys (never the secrets)."""
    with api() as client:
        found = client.json("GET", "/v1/keys")["keys"]
    if as_json:
        print_json(found)
        return
    columns = ("id", "tenant", "scopes", "name", "created_at", "revoked_at")
    print_table(out, columns, _key_rows(found), wide, ids=("id", "tenant"))


def _key_rows(keys: list[dict[str, Any]]) -> list[list[Any]]:
    return [
        [key["id"], key["tenant"], ",".join(key["scopes"]), key["name"] or None, key["created_at"], key["revoked_at"]]
        for key in keys
    ]


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(metavar="KEY_ID")]) -> None:
    """Revoke a key."""
    with api() as client:
        revoked = client.request("DELETE", f"/v1/keys/{key_id}") is not None
    if not revoked:
        not_found(f"no active key {key_id!r}")
    out.print(f"revoked {key_id}", highlight=False)


@keys_app.command("rotate-signing")
def keys_rotate_signing() -> None:
    """Retire the tenant's statement signing key (still published) and make a new one."""
    with api(creates=True) as client:
        key = client.json("POST", "/v1/keys/signing/rotate")
    out.print(f"signing with {key['kid']} from {key['not_before']}; the others stay published", highlight=False)


@app.command()
def statement(
    identity: Annotated[str, typer.Argument(metavar="IDENTITY")],
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="YYYY-MM-DD", help="default today, UTC")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE", help="default: stdout")] = None,
) -> None:
    """An identity's reputation as a signed statement anyone can verify offline (`repute verify`)."""
    day = _day(as_of, "--as-of")
    with api() as client:
        found = client.json("GET", f"/v1/identities/{identity}/statement", params={"as_of": day.isoformat()})
    if found is None:
        not_found(f"no identity {identity!r}")
    text = orjson.dumps(found, option=orjson.OPT_INDENT_2).decode()
    if output is None:
        print(text)
        return
    output.write_text(text + "\n")
    err.print(f"statement of {identity} as of {day} written to {output}", markup=False, highlight=False)


@app.command()
def verify(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="a statement (`repute statement`)")],
    keys: Annotated[
        str | None, typer.Option("--keys", metavar="URL|FILE", help="the issuer's published keys; default: the API's")
    ] = None,
    proof: Annotated[Path | None, typer.Option("--proof", metavar="FILE", help="an event's inclusion proof")] = None,
    on: Annotated[str | None, typer.Option("--on", metavar="YYYY-MM-DD", help="check the validity on this day")] = None,
) -> None:
    """Verify a statement offline: the issuer's signature, its validity window and, with --proof, that an
    event counts in it. Exit 0 when it holds, 1 with one line naming what failed."""
    from service.client import ApiError
    from service.client.statements import checked, published_keys, read_json, summary
    from service.statements.statement import Invalid

    today = _day(on, "--on")
    try:
        envelope = read_json(file, "statement")
        inclusion = read_json(proof, "proof") if proof else None
        if keys is None:
            with api() as client:
                key_set = published_keys(None, client)
        else:
            key_set = published_keys(keys, None)
    except ApiError as exc:
        fail(str(exc))
    try:
        verified = checked(envelope, key_set, today, inclusion)
    except Invalid as exc:
        err.print(f"invalid: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    out.print(summary(verified, inclusion is not None), markup=False, highlight=False, soft_wrap=True)


PROFILE_COLUMNS = ("name", "tokens_high", "tokens_critical", "tokens_per_point", "duplicates", "applies_to")


def _applies_to(profile: dict[str, Any]) -> str:
    places = [*profile["identities"], *(f"input {kind}" for kind in profile["inputs"])]
    places += [f"default for {kind}" for kind in profile["default_for"]]
    return ", ".join(places) or "runs that name it"


@profiles_app.command("list")
def profiles_list(as_json: JsonFlag = False, wide: WideFlag = False) -> None:
    """The diagnosis profiles this tenant may use (built-in first) and where each applies."""
    with api() as client:
        found = client.json("GET", "/v1/profiles")["profiles"]
    if as_json:
        print_json(found)
        return
    rows = [[*(profile[name] for name in PROFILE_COLUMNS[:-1]), _applies_to(profile)] for profile in found]
    print_table(out, PROFILE_COLUMNS, rows, wide, ids=("name",))


@profiles_app.command("set")
def profiles_set(
    name: Annotated[str, typer.Argument(metavar="NAME")],
    tokens_high: Annotated[int | None, typer.Option("--tokens-high", metavar="N", help="cost_explosion from")] = None,
    tokens_critical: Annotated[int | None, typer.Option("--tokens-critical", metavar="N", help="critical from")] = None,
    tokens_per_point: Annotated[
        int | None, typer.Option("--tokens-per-point", metavar="N", help="tokens per impact point")
    ] = None,
    duplicates: Annotated[
        int | None, typer.Option("--duplicates", metavar="N", help="cost_explosion from this many duplicates")
    ] = None,
    identities: Annotated[
        list[str] | None, typer.Option("--identity", metavar="NAME|GLOB", help="repeat for several")
    ] = None,
    inputs: Annotated[list[InputKind] | None, choice(InputKind, "INPUT", "--input", help="repeat for several")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Define a profile and where it applies (a built-in one: its rules only); runs finalized from now on
    are judged under it. `repute reputation rebuild --rediagnose` judges the stored ones again."""
    thresholds = {"tokens_high": tokens_high, "tokens_critical": tokens_critical,
                  "tokens_per_point": tokens_per_point, "duplicates": duplicates}  # fmt: skip
    body = {**{key: value for key, value in thresholds.items() if value is not None},
            "identities": identities or [], "inputs": [str(kind) for kind in inputs or []]}  # fmt: skip
    with api(creates=True) as client:
        defined = client.json("PUT", f"/v1/profiles/{name}", json=body)
    if as_json:
        print_json(defined)
        return
    out.print(f"{name}: applies to {_applies_to(defined)}", markup=False, highlight=False)


@profiles_app.command("rules")
def profiles_rules(
    identity: Annotated[str | None, typer.Option(metavar="IDENTITY", help="with --input: who judges its runs")] = None,
    input_kind: Annotated[InputKind | None, choice(InputKind, "INPUT", "--input")] = None,
    as_json: JsonFlag = False,
    wide: WideFlag = False,
) -> None:
    """The rules in the order they are tried (after a run's own `profile`); with --identity and --input, the
    profile that judges such a run and the rule that chose it."""
    from service.profiles import Rule

    if (identity is None) != (input_kind is None):
        fail("give both --identity and --input, or neither")
    with api() as client:
        numbered = list(enumerate(client.json("GET", "/v1/profiles")["rules"], 1))
    if identity is not None and input_kind is not None:
        numbered = [next((n, rule) for n, rule in numbered if Rule(**rule).applies(identity, input_kind))]
    if as_json:
        print_json([rule for _, rule in numbered])
        return
    columns = ("order", "kind", "match", "profile")
    rows = [[n, rule["kind"], rule["match"], rule["profile"]] for n, rule in numbered]
    print_table(out, columns, rows, wide, ids=("match", "profile"))


def main() -> None:
    app()
