"""`repute diagnose`, `judge` and `gate`: a file judged offline (a gate also a stored run or suite)."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from service.cli.base import NEGATIVE, OK, api, app, err, fail, not_found, out, read_input
from service.settings import get_settings

if TYPE_CHECKING:
    from service.diagnosis import Profile


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
    """Diagnose a run offline and print the canonical diagnosis JSON (docs/model.md)."""
    from service.diagnosis import InputError, built_in_profile, parse_run
    from service.diagnosis import diagnose as diagnose_events
    from service.outcome import OutcomeInputError, classify_execution
    from service.run_report import run_text_report

    chosen = _offline_profile(profile) if profile else None
    data = read_input(file)
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
    sys.stdout.write(run_text_report(result.to_dict(), outcome) if text else result.canonical_json().decode() + "\n")


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
        document = orjson.loads(read_input(path))
    except orjson.JSONDecodeError as exc:
        fail(f"--profile {choice}: not JSON: {exc}")
    if not isinstance(document, dict):
        fail(f"--profile {choice}: expected a JSON object of thresholds")
    try:
        given = validated(ProfileFile, document)
        assert isinstance(given, ProfileFile)
        return profile_of(given.name or path.stem, given.thresholds(), given.detectors)
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
    """Score one session of an OTLP log (docs/model.md) and print it as YAML."""
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
        data = read_input(file)
        try:
            verdict = verdict_of_file(data, get_settings().quality_pass_threshold)
        except InputError as exc:
            fail(f"{file}: {exc.located()}")
        result = gate_run(verdict, min_trust, allow_review)
    out.print(result.message, markup=False, highlight=False)
    raise typer.Exit(OK if result.passed else NEGATIVE)
