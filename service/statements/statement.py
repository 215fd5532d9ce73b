"""A reputation statement (SPEC §15): its payload as canonical JSON, the evidence rows it commits to, and
what a verifier checks, offline: the issuer's published key, the signature, the validity window, and an
event's inclusion proof. Every check that fails names what failed, in one line."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import orjson

from service.statements import merkle
from service.statements.envelope import PAYLOAD_TYPE, Opened, Unreadable, jwk_public_key, opened, signed_by

STATEMENT_TYPE = "repute.reputation-statement/v1"
VALID_DAYS = 7
# An evidence row: one reputation event that counts in the window, as the statement commits to it.
ROW_FIELDS = (
    "identity", "event_id", "timestamp", "category", "event_type", "score_delta", "confidence", "weight",
    "reference_type", "reference_id", "source", "sign",
)  # fmt: skip


def canonical(value: Any) -> bytes:
    """Canonical JSON: keys sorted, no spaces, UTF-8, numbers as the shortest text that reads back the same."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def evidence_row(event: Mapping[str, Any]) -> bytes:
    """An event's canonical row (its ROW_FIELDS; the time as ISO 8601 UTC with milliseconds)."""
    row = {name: event[name] for name in ROW_FIELDS}
    row["event_id"] = str(row["event_id"])
    row["timestamp"] = row["timestamp"].isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return canonical(row)


def payload(
    issuer: str, subject: str, as_of: date, report: Mapping[str, Any], model: Mapping[str, Any], rows: Sequence[bytes]
) -> bytes:
    """The statement's canonical JSON: the reputation `report` of `subject` at `as_of` (its scores, trends,
    categories and runs' figures), the model in force, and the evidence: the count and Merkle root of the
    canonical rows of the events that count, in (timestamp, event_id) order."""
    return canonical(
        {
            "type": STATEMENT_TYPE,
            "issuer": issuer,
            "subject": subject,
            "as_of": as_of.isoformat(),
            "valid_until": (as_of + timedelta(days=VALID_DAYS)).isoformat(),
            "window_days": report["window_days"],
            "score": report["overall"],
            "confidence": report["confidence"],
            "trend_7d": report["trend_7d"],
            "trend_30d": report["trend_30d"],
            "categories": report["categories"],
            "runs": {name: report[name] for name in ("runs", "execution_errors", "unsafe_runs")},
            "model": model,
            "evidence": {"count": len(rows), "root": merkle.root(rows).hex(), "hash": "sha256, RFC 6962"},
        }
    )


def proof(rows: Sequence[bytes], index: int) -> dict[str, Any]:
    """The inclusion proof of evidence row `index`: the row's exact canonical text (the leaf: a verifier hashes
    these bytes, it never has to canonicalize JSON itself), its place, and its audit path."""
    return {
        "leaf": rows[index].decode(),
        "index": index,
        "count": len(rows),
        "path": [node.hex() for node in merkle.audit_path(index, rows)],
    }


class Invalid(Exception):
    """A statement that does not verify; the message says what failed, in one line."""


@dataclass(frozen=True)
class Verified:
    statement: dict[str, Any]
    keyid: str


def verify(envelope: Any, keys: Mapping[str, Any], today: date, inclusion: Mapping[str, Any] | None = None) -> Verified:
    """Checks a statement envelope against the published key set `keys` ({"keys": [JWK with tenant,
    not_before, not_after]}) on `today`, and an inclusion proof when given; raises Invalid naming what failed."""
    try:
        sealed = opened(envelope)
    except Unreadable as error:
        raise Invalid(str(error)) from None
    if sealed.payload_type != PAYLOAD_TYPE:
        raise Invalid(f"payload type {sealed.payload_type!r} is not a Repute statement's ({PAYLOAD_TYPE})")
    statement = _statement(sealed)
    _check_signature(sealed, statement, keys)
    if today > date.fromisoformat(statement["valid_until"]):
        raise Invalid(f"expired: valid until {statement['valid_until']}, checked on {today.isoformat()}")
    if inclusion is not None:
        _check_inclusion(statement, inclusion)
    return Verified(statement, sealed.keyid)


def _statement(sealed: Opened) -> dict[str, Any]:
    try:
        statement = orjson.loads(sealed.payload)
    except orjson.JSONDecodeError:
        raise Invalid("the payload is not JSON") from None
    if not isinstance(statement, dict) or statement.get("type") != STATEMENT_TYPE:
        raise Invalid(f"the payload is not a {STATEMENT_TYPE}")
    return statement


def _check_signature(sealed: Opened, statement: Mapping[str, Any], keys: Mapping[str, Any]) -> None:
    published = [jwk for jwk in keys.get("keys", ()) if isinstance(jwk, dict) and jwk.get("kid") == sealed.keyid]
    if not published:
        raise Invalid(f"unknown key {sealed.keyid}: not among the published keys")
    jwk = published[0]
    if jwk.get("tenant") != statement.get("issuer"):
        raise Invalid(
            f"key {sealed.keyid} is tenant {jwk.get('tenant')!r}'s, not the issuer {statement.get('issuer')!r}'s"
        )
    key = jwk_public_key(jwk)
    if key is None or not signed_by(sealed, key):
        raise Invalid("bad signature: the statement was changed or signed by another key")


def _check_inclusion(statement: Mapping[str, Any], inclusion: Mapping[str, Any]) -> None:
    try:
        leaf, index, count = str(inclusion["leaf"]).encode(), int(inclusion["index"]), int(inclusion["count"])
        path = [bytes.fromhex(node) for node in inclusion["path"]]
        row = orjson.loads(leaf)
    except (KeyError, TypeError, ValueError):
        raise Invalid("the proof is not one (leaf, index, count, path)") from None
    if not isinstance(row, dict) or row.get("identity") != statement["subject"]:
        raise Invalid(f"the proof is of another identity's event, not {statement['subject']!r}'s")
    evidence = statement["evidence"]
    reached = merkle.root_from_path(leaf, index, count, path)
    if count != evidence["count"] or reached is None or reached.hex() != evidence["root"]:
        raise Invalid("the proof does not reach the statement's evidence root")
