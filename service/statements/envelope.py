"""DSSE envelopes (the Dead Simple Signing Envelope of in-toto and Sigstore) signed with Ed25519, from the
`cryptography` package: never a hand-written primitive. The signature covers the pre-authentication
encoding PAE(type, body) = "DSSEv1" SP len(type) SP type SP len(body) SP body, so a payload cannot be
passed off as another type. Ed25519 is deterministic: the same key and payload give the same bytes.
Keys travel as JWK (RFC 8037: kty OKP, crv Ed25519, x the public key in base64url)."""

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

PAYLOAD_TYPE = "application/vnd.repute.statement+json"


def pae(payload_type: str, body: bytes) -> bytes:
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_bytes(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    """The JWK thumbprint (RFC 7638) of the public key: SHA-256 of its required members, sorted, no spaces."""
    members = orjson.dumps(
        {"crv": "Ed25519", "kty": "OKP", "x": b64url(public_bytes(key))}, option=orjson.OPT_SORT_KEYS
    )
    return b64url(hashlib.sha256(members).digest())


def public_jwk(key: Ed25519PublicKey) -> dict[str, str]:
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(public_bytes(key)), "kid": key_id(key), "alg": "EdDSA",
            "use": "sig"}  # fmt: skip


def jwk_public_key(jwk: dict[str, Any]) -> Ed25519PublicKey | None:
    """The public key of a JWK, or None when it is not an Ed25519 one."""
    if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("x"), str):
        return None
    try:
        return Ed25519PublicKey.from_public_bytes(from_b64url(jwk["x"]))
    except ValueError:
        return None


def sign(payload: bytes, key: Ed25519PrivateKey) -> dict[str, Any]:
    """The envelope of `payload`, signed by `key`."""
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": key_id(key.public_key()), "sig": base64.b64encode(signature).decode()}],
    }


@dataclass(frozen=True)
class Opened:
    """An envelope read: its payload, and the key id and signature of its one signature."""

    payload_type: str
    payload: bytes
    keyid: str
    signature: bytes


class Unreadable(ValueError):
    """The file is not a statement envelope; the message says what is missing."""


def opened(envelope: Any) -> Opened:
    if not isinstance(envelope, dict):
        raise Unreadable("not a DSSE envelope (a JSON object with payloadType, payload and signatures)")
    signatures = envelope.get("signatures")
    if not isinstance(signatures, list) or len(signatures) != 1 or not isinstance(signatures[0], dict):
        raise Unreadable("a statement carries exactly one signature")
    try:
        return Opened(
            str(envelope["payloadType"]),
            base64.b64decode(envelope["payload"], validate=True),
            str(signatures[0]["keyid"]),
            base64.b64decode(signatures[0]["sig"], validate=True),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise Unreadable(f"not a DSSE envelope: {error}") from None


def signed_by(envelope: Opened, key: Ed25519PublicKey) -> bool:
    try:
        key.verify(envelope.signature, pae(envelope.payload_type, envelope.payload))
    except InvalidSignature:
        return False
    return True
