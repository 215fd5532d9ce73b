"""`repute ingest`, `record`, `runs` and `summary`: runs in, runs out."""

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from service.cli.base import (
    LARGEST_PAGE,
    NEGATIVE,
    OK,
    USAGE,
    AllFlag,
    CursorOption,
    JsonFlag,
    Page,
    WideFlag,
    api,
    app,
    choice,
    err,
    fail,
    more_hint,
    not_found,
    out,
    pages,
    runs_app,
)
from service.diagnosis.failure_types import FailureType
from service.run_report import TREE_BRANCH
from service.terminal import print_json, print_table
from service.vocab import ExecutionStatus, Readiness, RunStatus

if TYPE_CHECKING:
    from service.client import ApiClient


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATHS", help="session files, directories of them, OTLP JSONL files")
    ],
    identity: Annotated[
        str | None, typer.Option(metavar="IDENTITY", help="identity for session files that name none")
    ] = None,
    batch_size: Annotated[int, typer.Option(metavar="N", min=1, max=5000, help="runs per request")] = 200,
    quiet: Annotated[bool, typer.Option("--quiet", help="the counts only, not each run")] = False,
    as_json: JsonFlag = False,
    wide: WideFlag = False,
) -> None:
    """Store, finalize and diagnose runs from files, and list each run with its verdict (a table, TSV when
    piped; the counts follow on stderr); a bad file is reported, the others are stored, and the exit code
    is 2 when any file failed."""
    from service.client.ingest import ingest_paths

    with api(creates=True) as client:
        summary = ingest_paths(client, paths, identity, batch_size, err)
    if as_json:
        print_json(dataclasses.asdict(summary))
    elif quiet:
        out.print(summary.line(), highlight=False)
    else:
        rows = [(*cells, _stored(run)) for run in summary.runs for cells in _tree_cells(run)]
        print_table(out, INGEST_COLUMNS, rows, wide, ids=("run_id", "identity"), drop=RUNS_DROPPED_FIRST)
        err.print(summary.line(), highlight=False)
    if summary.failed:
        raise typer.Exit(USAGE)


def _stored(run: dict[str, Any]) -> str:
    return "new" if run["created"] else "already present"


RUN_COLUMNS = ("run_id", "identity", "trust", "readiness", "primary_failure", "tool_calls", "outcome")
INGEST_COLUMNS = (*RUN_COLUMNS, "stored")
# What a narrow terminal leaves out first, to keep the ids whole (`--wide` shows every column).
RUNS_DROPPED_FIRST = ("tool_calls", "stored", "primary_failure", "readiness")


def _run_cells(run: dict[str, Any]) -> tuple[Any, ...]:
    """A run's row; a child run as its parent's answer shows it has no failure or tool calls (missing)."""
    verdict = (run["trust_score"], run["readiness_level"], run.get("primary_failure"))
    return (run["run_id"], run["identity"], *verdict, run.get("tool_calls"), _outcome(run))


def _outcome(run: dict[str, Any]) -> str:
    """How a run ended, leading with an execution error's stage and reason."""
    if run["execution_status"] != ExecutionStatus.EXECUTION_ERROR:
        return (run["execution_status"] or run["status"]).replace("_", " ")
    where = "/".join(part for part in (run.get("failure_stage"), run.get("failure_reason_code")) if part)
    return f"execution error ({where})" if where else "execution error"


@runs_app.command("list")
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
    a multi-agent run's other agents are listed under it. One run's whole diagnosis: `repute runs show ID`."""
    filters = {
        "identity": identity, "suite": suite, "readiness": readiness, "execution_status": execution_status,
        "primary_failure": primary_failure, "status": status,
    }  # fmt: skip
    with api() as client:
        params = {name: str(value) for name, value in filters.items() if value}
        rows, more = pages(client, "/v1/runs", "runs", params, Page(limit, cursor, every))
        if tree:
            rows = [_with_children(client, row) for row in rows if not row["parent_run_id"]]
    if as_json:
        print_json(rows)
    else:
        cells = [cells for row in rows for cells in _tree_cells(row)]
        print_table(out, RUN_COLUMNS, cells, wide, ids=("run_id", "identity"), drop=RUNS_DROPPED_FIRST)
    more_hint(more, limit, "runs")


@runs_app.command("show")
def show_run(run_id: Annotated[str, typer.Argument(metavar="RUN_ID")], as_json: JsonFlag = False) -> None:
    """One stored run: whose it is, its execution outcome, its trust and why, the primary failure with its
    causal chain, every cause with its evidence and remediation, and its agents (a multi-agent run's child
    runs with their verdicts). Exit 1 when there is no such run."""
    from service.run_report import stored_run_report

    with api() as client:
        run = client.json("GET", f"/v1/runs/{run_id}")
    if run is None:
        not_found(f"no run {run_id!r}")
    if as_json:
        print_json(run)
    else:
        out.print(stored_run_report(run), end="", markup=False, highlight=False)


def _with_children(client: "ApiClient", row: dict[str, Any]) -> dict[str, Any]:
    children, _ = pages(client, "/v1/runs", "runs", {"parent": row["run_id"]}, Page(LARGEST_PAGE, None, True))
    return {**row, "child_runs": children}


def _tree_cells(row: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The row's cells, then its child runs' (with --tree), each run id under its parent's."""
    children = [_run_cells(child) for child in row.get("child_runs", [])]
    return [_run_cells(row), *((TREE_BRANCH + cells[0], *cells[1:]) for cells in children)]


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
    quiet: Annotated[
        bool, typer.Option("--quiet", help="do not pass the agent's output through (it is recorded all the same)")
    ] = False,
) -> None:
    """Run an agent and record what it prints as a run, passing its output through as it comes (--quiet:
    not): each JSON line is one of its events, any other line a process_output event; a non-zero exit or a
    timeout is an execution error. The run is stored and diagnosed (by the server, else in the local
    store), and the exit code is the gate's: 0 pass, 1 fail."""
    from service.client.record import CannotStart, default_identity, record_process, run_body
    from service.gate import gate_run

    with api(creates=True) as client:
        try:
            recording = record_process(command, timeout, echo=not quiet)
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
