"""Each tenant's Ed25519 statement signing keys (SPEC §15), as files: under the data directory's
`signing-keys/`, or REPUTE_SIGNING_KEYS_DIR (a secret volume several servers share). A tenant's keys live
in a directory of its own (its name percent-encoded), each key as `<kid>.pem` (PKCS #8, mode 0600) beside
`<kid>.json` (its tenant and the days it was in force, public). A key is made on a tenant's first
statement; a rotation retires the key in force (it stays published, for the statements it signed) and
makes a new one. A lock file per tenant keeps two processes from making two keys at once."""

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)

from service.settings import Settings
from service.statements.envelope import key_id, public_jwk

PRIVATE_MODE = 0o600


@dataclass(frozen=True)
class SigningKey:
    tenant: str
    kid: str
    not_before: str  # ISO 8601
    not_after: str | None  # None while in force
    private: Ed25519PrivateKey | None = None

    def jwk(self) -> dict[str, Any]:
        assert self.private is not None
        return {**public_jwk(self.private.public_key()), "tenant": self.tenant, "not_before": self.not_before,
                "not_after": self.not_after}  # fmt: skip


def keys_dir(settings: Settings) -> Path:
    return settings.signing_keys_dir or settings.data_dir / "signing-keys"


def _tenant_dir(root: Path, tenant: str) -> Path:
    return root / quote(tenant, safe="")


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    with (directory / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _read(directory: Path) -> list[SigningKey]:
    found = []
    for meta in sorted(directory.glob("*.json")):
        record = orjson.loads(meta.read_bytes())
        private = load_pem_private_key(meta.with_suffix(".pem").read_bytes(), password=None)
        assert isinstance(private, Ed25519PrivateKey)
        found.append(SigningKey(record["tenant"], record["kid"], record["not_before"], record["not_after"], private))
    return sorted(found, key=lambda key: key.not_before)


def _write(directory: Path, key: SigningKey) -> None:
    assert key.private is not None
    pem = key.private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    path = directory / f"{key.kid}.pem"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
    os.chmod(path, PRIVATE_MODE)
    record = {"tenant": key.tenant, "kid": key.kid, "not_before": key.not_before, "not_after": key.not_after}
    temporary = directory / f"{key.kid}.json.tmp"
    temporary.write_bytes(orjson.dumps(record))
    temporary.replace(directory / f"{key.kid}.json")  # the key counts once its record is whole


def _new(tenant: str, now: datetime) -> SigningKey:
    private = Ed25519PrivateKey.generate()
    return SigningKey(tenant, key_id(private.public_key()), now.isoformat(timespec="seconds"), None, private)


def signing_key(settings: Settings, tenant: str, now: datetime) -> SigningKey:
    """The tenant's key in force, made now when it has none."""
    directory = _tenant_dir(keys_dir(settings), tenant)
    with _locked(directory):
        in_force = [key for key in _read(directory) if key.not_after is None]
        if in_force:
            return in_force[-1]
        key = _new(tenant, now)
        _write(directory, key)
        return key


def rotate(settings: Settings, tenant: str, now: datetime) -> SigningKey:
    """Retires the tenant's key in force (still published) and makes a new one."""
    directory = _tenant_dir(keys_dir(settings), tenant)
    stamp = now.isoformat(timespec="seconds")
    with _locked(directory):
        for key in _read(directory):
            if key.not_after is None:
                _write(directory, SigningKey(key.tenant, key.kid, key.not_before, stamp, key.private))
        key = _new(tenant, now)
        _write(directory, key)
        return key


def published(settings: Settings) -> list[SigningKey]:
    """Every tenant's keys, retired ones included."""
    root = keys_dir(settings)
    if not root.is_dir():
        return []
    return [key for directory in sorted(root.iterdir()) if directory.is_dir() for key in _read(directory)]
