"""SQL for API keys. Only hashes are stored; revocation writes a newer version of the row."""

from collections.abc import Sequence
from typing import Any

from service.store.client import Store
from service.store.rows import as_utc, dicts


def _keys(store: Store, where: str, parameters: dict[str, Any]) -> list[dict[str, Any]]:
    rows = dicts(
        store.client.query(
            f"SELECT * FROM api_keys WHERE {where} ORDER BY version DESC LIMIT 1 BY tenant, key_id",
            parameters=parameters,
        )
    )
    for row in rows:
        row["created_at"], row["revoked_at"] = as_utc(row["created_at"]), as_utc(row["revoked_at"])
    return rows


def get_key(store: Store, key_id: str) -> dict[str, Any] | None:
    rows = _keys(store, "key_id = {key_id:String}", {"key_id": key_id})
    return rows[0] if rows else None


def list_keys(store: Store, tenant: str | None) -> Sequence[dict[str, Any]]:
    if tenant is None:
        return sorted(_keys(store, "1", {}), key=lambda r: r["created_at"])
    return sorted(_keys(store, "tenant = {tenant:String}", {"tenant": tenant}), key=lambda r: r["created_at"])


def count_active_keys(store: Store) -> int:
    return sum(1 for row in _keys(store, "1", {}) if row["revoked_at"] is None)
