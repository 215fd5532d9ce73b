"""`repute statement` and `repute verify`: an identity's reputation as a signed statement (SPEC §15),
and its verification offline."""

from pathlib import Path
from typing import Annotated

import orjson
import typer

from service.cli.base import api, app, day_of, err, fail, not_found, out


@app.command()
def statement(
    identity: Annotated[str, typer.Argument(metavar="IDENTITY")],
    as_of: Annotated[str | None, typer.Option("--as-of", metavar="YYYY-MM-DD", help="default today, UTC")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE", help="default: stdout")] = None,
) -> None:
    """An identity's reputation as a signed statement anyone can verify offline (`repute verify`)."""
    day = day_of(as_of, "--as-of")
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

    today = day_of(on, "--on")
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
