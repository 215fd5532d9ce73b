"""`repute reputation`, `fleet` and `alerts`: what the runs made of each agent, and of the fleet."""

from typing import Annotated, Any

import typer

from service.cli.base import (
    AllFlag,
    CursorOption,
    JsonFlag,
    Page,
    WideFlag,
    api,
    app,
    choice,
    day_of,
    err,
    fmt,
    more_hint,
    not_found,
    out,
    pages,
    reputation_app,
    when,
)
from service.terminal import print_json, print_table
from service.vocab import IdentitySort


@reputation_app.command("show")
def reputation_show(
    identity: Annotated[str, typer.Argument(metavar="IDENTITY")],
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="YYYY-MM-DD", help="default today, UTC")] = None,
    as_json: JsonFlag = False,
    explain: Annotated[bool, typer.Option("--explain", help="what moved the score: event types, top runs")] = False,
) -> None:
    """An identity's 90-day reputation, confidence and trends."""
    day = day_of(as_of, "--as-of")
    path = f"/v1/identities/{identity}/reputation" + ("/explain" if explain else "")
    with api() as client:
        found = client.json("GET", path, params={"as_of": day.isoformat()})
    if found is None:
        not_found(f"no identity {identity!r}")
    if as_json:
        print_json(found)
        return
    if explain:
        _print_explanation(found, client.url)
        return
    out.print(f"[bold]{identity}[/] as of {found['as_of']} (90 days)")
    out.print(f"overall {fmt(found['overall'])}  confidence {found['confidence']:.2f}  events {found['events']}")
    for name, value in found["categories"].items():
        out.print(f"  {name}: {fmt(value)}")
    out.print(f"trend 7d {fmt(found['trend_7d'])}  trend 30d {fmt(found['trend_30d'])}")
    out.print(
        f"runs {found['runs']}, execution errors {_errors_cell(found)}, unsafe {found['unsafe_runs']};"
        f" last run {when(found['last_run_at'])}",
        highlight=False,
    )
    for failure, count in found["failures"].items():
        top = " (top failure: the primary failure of most runs)" if failure == found["top_failure"] else ""
        out.print(f"  failure {failure}: {count}{top}")
    if found["runs"] == 0 and found["events"] == 0:  # why an agent the store holds shows nothing, nor is in the fleet
        out.print(
            f"nothing of {identity} in the 90 days to {found['as_of']}: older runs and signals no longer count"
            " (--as-of a day within 90 days of them shows them)",
            markup=False,
            highlight=False,
        )


def _errors_cell(found: dict[str, Any]) -> str:
    """Execution errors with their share of the runs: "6 (50%)"."""
    share = found["execution_error_share"]
    return f"{found['execution_errors']}" + ("" if share is None else f" ({share:.0%})")


FLEET_COLUMNS = (
    "identity", "reputation", "confidence", "trend_7d", "runs", "execution_errors", "unsafe_runs", "top_failure",
    "last_run",
)  # fmt: skip


# What a narrow terminal leaves out first, to keep the identities whole (`--wide` shows every column).
FLEET_DROPPED_FIRST = ("trend_7d", "unsafe_runs", "last_run", "confidence", "top_failure")


def _fleet_cells(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["identity"], fmt(row["overall"]), f"{row['confidence']:.0%}", fmt(row["trend_7d"]), row["runs"],
        _errors_cell(row), row["unsafe_runs"], row["top_failure"], when(row["last_run_at"]),
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
    their share, unsafe verdicts, the top failure: the primary failure of most runs, the last run), worst
    first. Scores refresh every minute."""
    params = {"sort": str(sort), "order": "desc" if descending else "asc"}
    with api() as client:
        rows, more = pages(client, "/v1/identities", "identities", params, Page(limit, cursor, every))
    if as_json:
        print_json(rows)
    else:
        cells = [_fleet_cells(row) for row in rows]
        print_table(out, FLEET_COLUMNS, cells, wide, ids=("identity",), drop=FLEET_DROPPED_FIRST)
    more_hint(more, limit, "identities")


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


REPUTATION_DOC = "docs/reputation.md"  # in the repository; a server shows it at /ui/reputation.md


def _print_explanation(found: dict[str, Any], server: str | None) -> None:
    out.print(f"[bold]{found['identity']}[/] as of {found['as_of']}: what moved the score over the last 7 days")
    for category, line in found["changes"].items():
        out.print(f"  {category}: {line}", highlight=False)
    columns = ("reference_type", "reference_id", "event_type", "events", "weighted_delta", "points", "primary_failure")
    rows = [
        [*(r[name] for name in columns[:5]), round(r["points"], 1), r["primary_failure"]]
        for r in found["top_references"]
    ]
    print_table(out, columns, rows, ids=("reference_id",), drop=("weighted_delta", "events", "reference_type"))
    for capped in found["capped"]:
        out.print(f"  {capped['events']} events from source {capped['source']} over the daily cap: not counted")
    shown = f" ({server}/ui/reputation.md)" if server else ""
    out.print(f"How reputation is computed: {REPUTATION_DOC}{shown}", markup=False, highlight=False)


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
