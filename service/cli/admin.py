"""`repute keys` and `repute profiles`: API keys and diagnosis profiles."""

from typing import Annotated, Any

import typer

from service.cli.base import JsonFlag, WideFlag, api, choice, fail, keys_app, not_found, out, profiles_app
from service.diagnosis.failure_types import FailureType
from service.terminal import print_json, print_table
from service.vocab import InputKind, Scope


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


PROFILE_COLUMNS = (
    "name", "tokens_high", "tokens_critical", "tokens_per_point", "duplicates", "detectors", "applies_to",
)  # fmt: skip


def _detectors_cell(profile: dict[str, Any]) -> str:
    """The detectors a profile runs: all of them, or their names."""
    return "all" if len(profile["detectors"]) == len(FailureType) else ", ".join(profile["detectors"])


def _applies_to(profile: dict[str, Any]) -> str:
    places = [*profile["identities"], *(f"input {kind}" for kind in profile["inputs"])]
    places += [f"default for {kind}" for kind in profile["default_for"]]
    return ", ".join(places) or "runs that name it"


@profiles_app.command("list")
def profiles_list(as_json: JsonFlag = False, wide: WideFlag = False) -> None:
    """The diagnosis profiles this tenant may use (built-in first) and where each applies."""
    found: list[dict[str, Any]] = []
    with api() as client:
        page = client.json("GET", "/v1/profiles")
        found.extend(page["profiles"])
        while page["next_cursor"]:
            page = client.json("GET", "/v1/profiles", params={"cursor": page["next_cursor"]})
            found.extend(page["profiles"])
    if as_json:
        print_json(found)
        return
    rows = [
        [*(profile[name] for name in PROFILE_COLUMNS[:-2]), _detectors_cell(profile), _applies_to(profile)]
        for profile in found
    ]
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
    detectors: Annotated[
        list[FailureType] | None,
        choice(FailureType, "FAILURE", "--detector", help="the detectors it runs, repeat for several; default: all"),
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
    if detectors:
        body["detectors"] = [str(detector) for detector in detectors]
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
