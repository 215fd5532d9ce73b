"""Signed reputation statements (SPEC §15) through the real API and `repute verify`: a statement verifies with
the issuer's published key; one byte changed, another tenant's key, an expired validity window, a proof of
another identity's event and an altered proof path each fail with their own message. The evidence root is
recomputed here by a small reader of the tests' own (RFC 6962, from the rows the store returns), and the
statement's score is the reputation API's."""

import base64
import hashlib
import os
import stat
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from service.cli import app as cli
from service.settings import Settings
from service.statements import envelope, merkle
from service.store import signing_keys
from service.store.client import Store

AS_OF = date(2026, 11, 20)


# --- a reader of the tests' own: RFC 6962 from its text, canonical rows from the store's columns -----------


def _mth(leaves: list[bytes]) -> bytes:
    """RFC 6962 §2.1: MTH({}) = SHA-256(), MTH({d}) = SHA-256(0x00 || d), else split at the largest power of
    two smaller than n."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + _mth(leaves[:k]) + _mth(leaves[k:])).digest()


def _rows_from_store(store: Store, tenant: str, identity: str) -> list[bytes]:
    """The identity's uncapped events of the 90 days up to AS_OF, by (timestamp, event_id), as canonical JSON."""
    result = store.client.query(
        "SELECT identity, toString(event_id), formatDateTime(timestamp, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC'), category,"
        " event_type, score_delta, confidence, weight, reference_type, reference_id, source, sign"
        " FROM reputation_events WHERE tenant = {t:String} AND identity = {i:String} AND capped = 0"
        " AND toDate(timestamp) BETWEEN {first:Date} AND {last:Date} ORDER BY timestamp, event_id",
        parameters={"t": tenant, "i": identity, "first": AS_OF - timedelta(days=89), "last": AS_OF},
    )
    names = ("identity", "event_id", "timestamp", "category", "event_type", "score_delta", "confidence", "weight",
             "reference_type", "reference_id", "source", "sign")  # fmt: skip
    rows = []
    for values in result.result_rows:
        row = dict(zip(names, values, strict=True))
        row["timestamp"] = row["timestamp"][:23] + "Z"  # DateTime64(3): milliseconds
        rows.append(orjson.dumps(row, option=orjson.OPT_SORT_KEYS))
    return rows


# --- seeding ------------------------------------------------------------------------------------------------


def _seeded(client: httpx.Client) -> str:
    """An identity with two runs and a posted payment signal: its name."""
    identity = f"stated-{uuid.uuid4().hex[:8]}"
    for n, events in enumerate(([{"event": "decision"}], [{"event": "tool_call", "tool": "t", "args": {}}] * 3)):
        run = {"run_id": f"{identity}-{n}", "identity": identity,
               "events": [{**e, "timestamp": f"2026-11-1{n}T10:00:00Z"} for e in events]}  # fmt: skip
        assert client.post("/v1/sessions", json=run).status_code == 201
    signal = {"identity": identity, "category": "economic", "event_type": "payment_completed", "score_delta": 0.35,
              "timestamp": "2026-11-19T09:00:00Z"}  # fmt: skip
    assert client.post("/v1/reputation-events", json=[signal]).status_code == 202
    return identity


def _statement(client: httpx.Client, identity: str, as_of: date = AS_OF) -> dict[str, Any]:
    answer = client.get(f"/v1/identities/{identity}/statement", params={"as_of": as_of.isoformat()})
    assert answer.status_code == 200, answer.text
    return answer.json()


def _payload(statement: dict[str, Any]) -> dict[str, Any]:
    return orjson.loads(base64.b64decode(statement["payload"]))


def _verify(tmp_path: Path, statement: Any, keys: Any, *options: str, proof: Any = None) -> tuple[int, str]:
    (tmp_path / "statement.json").write_bytes(orjson.dumps(statement))
    (tmp_path / "keys.json").write_bytes(orjson.dumps(keys))
    arguments = ["verify", str(tmp_path / "statement.json"), "--keys", str(tmp_path / "keys.json"), *options]
    if proof is not None:
        (tmp_path / "proof.json").write_bytes(orjson.dumps(proof))
        arguments += ["--proof", str(tmp_path / "proof.json")]
    done = CliRunner().invoke(cli, arguments)
    return done.exit_code, done.output


ON_AS_OF = ("--on", AS_OF.isoformat())


# --- the tests ----------------------------------------------------------------------------------------------


def test_a_statement_verifies_with_the_published_key_and_says_what_the_api_says(
    client: httpx.Client, embedded_store: Store, tenant: str, tmp_path: Path
) -> None:
    identity = _seeded(client)
    signed = _statement(client, identity)
    keys = httpx.get(f"{client.base_url}/.well-known/repute-keys.json").json()  # no key needed
    code, output = _verify(tmp_path, signed, keys, *ON_AS_OF)
    assert code == 0, output
    assert output.startswith(f"valid: {identity} scores")
    statement = _payload(signed)
    reputation = client.get(f"/v1/identities/{identity}/reputation", params={"as_of": AS_OF.isoformat()}).json()
    assert (statement["issuer"], statement["subject"], statement["as_of"]) == (tenant, identity, "2026-11-20")
    assert statement["valid_until"] == "2026-11-27"
    assert (statement["score"], statement["confidence"]) == (reputation["overall"], reputation["confidence"])
    assert statement["categories"] == reputation["categories"]
    assert statement["runs"] == {name: reputation[name] for name in ("runs", "execution_errors", "unsafe_runs")}
    rows = _rows_from_store(embedded_store, tenant, identity)
    assert statement["evidence"]["count"] == len(rows) > 0
    assert statement["evidence"]["root"] == _mth(rows).hex()
    assert _statement(client, identity) == signed  # the same store and as_of: the same bytes


def test_every_kind_of_forgery_fails_with_its_own_message(client: httpx.Client, data_dir: Path, tmp_path: Path) -> None:
    identity = _seeded(client)
    signed = _statement(client, identity)
    keys = client.get("/.well-known/repute-keys.json").json()

    body = bytearray(base64.b64decode(signed["payload"]))
    body[body.index(b'"score":') + 8] ^= 1  # one byte of the score changed
    changed = {**signed, "payload": base64.b64encode(bytes(body)).decode()}
    assert _verify(tmp_path, changed, keys, *ON_AS_OF) == (1, "invalid: bad signature: the statement was changed"
                                                            " or signed by another key\n")  # fmt: skip

    other = signing_keys.signing_key(Settings(data_dir=data_dir), f"t_other_{uuid.uuid4().hex[:6]}", datetime.now(UTC))
    assert other.private is not None
    forged = envelope.sign(base64.b64decode(signed["payload"]), other.private)
    all_keys = client.get("/.well-known/repute-keys.json").json()
    code, output = _verify(tmp_path, forged, all_keys, *ON_AS_OF)
    assert code == 1 and f"is tenant '{other.tenant}''s, not the issuer" in output

    code, output = _verify(tmp_path, signed, {"keys": []}, *ON_AS_OF)
    assert code == 1 and output.startswith("invalid: unknown key")

    code, output = _verify(tmp_path, signed, keys, "--on", (AS_OF + timedelta(days=8)).isoformat())
    assert (code, output) == (1, "invalid: expired: valid until 2026-11-27, checked on 2026-11-28\n")


def test_an_events_proof_reaches_the_root_and_a_forged_one_does_not(
    client: httpx.Client, embedded_store: Store, tenant: str, tmp_path: Path
) -> None:
    identity, stranger = _seeded(client), _seeded(client)
    signed = _statement(client, identity)
    keys = client.get("/.well-known/repute-keys.json").json()
    rows = _rows_from_store(embedded_store, tenant, identity)
    for row in (rows[0], rows[-1]):
        proof = _proof(client, identity, orjson.loads(row)["event_id"])
        assert proof["leaf"].encode() == row
        assert _verify(tmp_path, signed, keys, *ON_AS_OF, proof=proof)[0] == 0

    altered = {**proof, "path": [("0" if node[0] != "0" else "1") + node[1:] for node in proof["path"]]}
    assert _verify(tmp_path, signed, keys, *ON_AS_OF, proof=altered) == (
        1, "invalid: the proof does not reach the statement's evidence root\n"
    )  # fmt: skip
    foreign_row = _rows_from_store(embedded_store, tenant, stranger)[0]
    foreign = _proof(client, stranger, orjson.loads(foreign_row)["event_id"])
    code, output = _verify(tmp_path, signed, keys, *ON_AS_OF, proof=foreign)
    assert code == 1 and "another identity's event" in output
    unknown = client.get(
        f"/v1/identities/{identity}/statement/proof", params={"as_of": AS_OF.isoformat(), "event_id": "nope"}
    )
    assert unknown.status_code == 404


def _proof(client: httpx.Client, identity: str, event_id: str) -> dict[str, Any]:
    answer = client.get(
        f"/v1/identities/{identity}/statement/proof", params={"as_of": AS_OF.isoformat(), "event_id": event_id}
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_tenants_statements_are_its_own_and_its_keys_kept_private(
    make_client: Callable[[str], httpx.Client], data_dir: Path, tenant: str
) -> None:
    owner, stranger = make_client(tenant), make_client(f"t_{uuid.uuid4().hex[:12]}")
    identity = _seeded(owner)
    _statement(owner, identity)
    assert stranger.get(f"/v1/identities/{identity}/statement").status_code == 404
    proof = stranger.get(f"/v1/identities/{identity}/statement/proof", params={"event_id": "x"})
    assert proof.status_code == 404
    keys = signing_keys.published(Settings(data_dir=data_dir))
    mine = [key for key in keys if key.tenant == tenant]
    assert len(mine) == 1
    private = next((data_dir / "signing-keys").glob(f"*/{mine[0].kid}.pem"))
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    listed = stranger.get("/.well-known/repute-keys.json").json()["keys"]
    assert all(set(jwk) >= {"kty", "crv", "x", "kid", "tenant"} and "d" not in jwk for jwk in listed)


def test_a_rotated_key_stays_published_and_its_statements_verify(client: httpx.Client, tmp_path: Path) -> None:
    identity = _seeded(client)
    before = _statement(client, identity)
    rotated = client.post("/v1/keys/signing/rotate").json()
    after = _statement(client, identity)
    assert after["signatures"][0]["keyid"] == rotated["kid"] != before["signatures"][0]["keyid"]
    keys = client.get("/.well-known/repute-keys.json").json()
    assert _verify(tmp_path, before, keys, *ON_AS_OF)[0] == 0
    assert _verify(tmp_path, after, keys, *ON_AS_OF)[0] == 0


@given(st.lists(st.binary(max_size=8), min_size=1, max_size=40), st.data())
def test_every_leaf_of_any_tree_is_proved_and_no_other_leaf_is(leaves: list[bytes], data: st.DataObject) -> None:
    root = merkle.root(leaves)
    assert root == _mth(leaves)
    index = data.draw(st.integers(0, len(leaves) - 1))
    path = merkle.audit_path(index, leaves)
    assert merkle.root_from_path(leaves[index], index, len(leaves), path) == root
    assert merkle.root_from_path(leaves[index] + b"x", index, len(leaves), path) != root
    if len(leaves) > 1:
        assert merkle.root_from_path(leaves[index], index, len(leaves), path[:-1]) != root
