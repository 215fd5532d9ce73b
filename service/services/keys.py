"""API keys: creation, verification (constant time), revocation, and the first-start admin key.

A key reads `rpt_<key id>_<secret>`. The id locates the row; only sha256(secret) is stored, and it is
compared with hmac.compare_digest. Secrets carry 256 random bits, so a fast hash is enough.
"""

import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from service.errors import FieldError
from service.store import keys as key_store
from service.store import writer
from service.store.client import Store
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT, SCOPES

_PREFIX = "rpt"


@dataclass(frozen=True)
class Principal:
    key_id: str
    tenant: str
    scopes: frozenset[str]


@dataclass(frozen=True)
class CreatedKey:
    key_id: str
    key: str
    tenant: str
    scopes: list[str]
    name: str
    created_at: datetime


def operator_principal() -> Principal:
    """The operator: tenant `default` with every scope (the in-process CLI acts as it)."""
    return Principal("operator", DEFAULT_TENANT, frozenset(SCOPES))


def is_operator(principal: Principal) -> bool:
    return principal.tenant == DEFAULT_TENANT


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(store: Store, tenant: str, scopes: list[str], name: str, now: datetime) -> CreatedKey:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise FieldError("scopes", f"unknown scope(s): {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    ordered = [s for s in SCOPES if s in scopes]
    writer.key(
        store,
        {
            "tenant": tenant,
            "key_id": key_id,
            "version": time.time_ns(),
            "name": name,
            "scopes": ordered,
            "key_hash": _hash(secret),
            "created_at": now,
            "revoked_at": None,
        },
    )
    return CreatedKey(key_id, f"{_PREFIX}_{key_id}_{secret}", tenant, ordered, name, now)


def revoke_key(store: Store, tenant: str | None, key_id: str, now: datetime) -> bool:
    """Revokes a key of `tenant` (any tenant when None). False when there is no such active key."""
    row = key_store.get_key(store, key_id)
    if row is None or row["revoked_at"] is not None or (tenant is not None and row["tenant"] != tenant):
        return False
    writer.key(store, {**row, "version": time.time_ns(), "revoked_at": now})
    _cache.clear()
    return True


def _split(key: str) -> tuple[str, str] | None:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != _PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


# Verified keys are cached briefly so a request costs no query; revocation clears this process's
# cache at once and reaches other processes within the TTL.
_CACHE_TTL_SECONDS = 5.0
_cache: dict[str, tuple[float, Principal | None]] = {}


def verify_key(store: Store, key: str) -> Principal | None:
    now = time.monotonic()
    cached = _cache.get(key)
    if cached and now - cached[0] < _CACHE_TTL_SECONDS:
        return cached[1]
    principal = _lookup(store, key)
    if len(_cache) > 10_000:
        _cache.clear()
    _cache[key] = (now, principal)
    return principal


def _lookup(store: Store, key: str) -> Principal | None:
    parts = _split(key)
    if parts is None:
        return None
    key_id, secret = parts
    row = key_store.get_key(store, key_id)
    if row is None or row["revoked_at"] is not None:
        return None
    if not hmac.compare_digest(row["key_hash"], _hash(secret)):
        return None
    return Principal(key_id, row["tenant"], frozenset(row["scopes"]))


def ensure_admin_key(store: Store, data_dir: Path, now: datetime) -> CreatedKey | None:
    """On first start (no active key at all) creates an admin key for tenant `default` and writes it
    to <data dir>/admin.key with mode 0600. Returns it so the caller prints it once."""
    if key_store.count_active_keys(store) > 0:
        return None
    created = create_key(store, DEFAULT_TENANT, list(SCOPES), "first-start admin", now)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / ADMIN_KEY_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(created.key + "\n")
    os.chmod(path, 0o600)
    return created


def key_view(row: dict[str, Any]) -> dict[str, Any]:
    """A key as listed (never its secret or hash)."""
    return {
        "id": row["key_id"],
        "tenant": row["tenant"],
        "scopes": list(row["scopes"]),
        "name": row["name"],
        "created_at": row["created_at"],
        "revoked_at": row["revoked_at"],
    }


def list_keys(store: Store, tenant: str | None) -> list[dict[str, Any]]:
    """The keys of `tenant` (every tenant's when None)."""
    return [key_view(row) for row in key_store.list_keys(store, tenant)]
