"""What the CLI talks to. In embedded mode one process owns the store: when `repute serve` runs on this
data directory, commands go through its API; otherwise they open the store directly. Both return the
same JSON-ready shapes (the API serves exactly what these service functions return)."""

import os
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

import httpx
import orjson

from service import runs
from service.alerts import report as alert_report
from service.judge import decode_json_body
from service.keys import DEFAULT_TENANT, create_key, revoke_key
from service.otlp import sessions_from_file
from service.reputation.report import reputation_report
from service.settings import Settings
from service.store import keys as key_store
from service.store import runs as run_store
from service.store.client import Store
from service.store.migrate import migrate
from service.suites import suite_summary

SERVER_FILE = "server.json"


class Backend(Protocol):
    def ingest(self, sessions: Sequence[runs.SessionInput]) -> list[dict[str, Any]]: ...
    def ingest_otlp_file(self, path: Path, identity: str | None) -> list[dict[str, Any]]: ...
    def list_runs(self, **filters: Any) -> list[dict[str, Any]]: ...
    def get_run(self, run_id: str) -> dict[str, Any] | None: ...
    def reputation(self, identity: str, as_of: date) -> dict[str, Any] | None: ...
    def suite_summary(self, suite: str, text: bool) -> dict[str, Any] | str | None: ...
    def alerts(self) -> dict[str, Any]: ...
    def create_key(self, tenant: str, scopes: list[str], name: str) -> dict[str, Any]: ...
    def list_keys(self) -> list[dict[str, Any]]: ...
    def revoke_key(self, key_id: str) -> bool: ...
    def close(self) -> None: ...


INGESTED_FIELDS = (
    "run_id", "trust_score", "readiness_level", "primary_failure", "execution_status", "tool_calls",
)  # fmt: skip


def ingested(record: dict[str, Any], created: bool) -> dict[str, Any]:
    """The same short record of an ingested run from either backend."""
    return {**{k: record[k] for k in INGESTED_FIELDS}, "created": created}


def _jsonable(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value, default=str))


class LocalBackend:
    """The store opened in this process (tenant `default`, as the operator)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = Store(settings)
        migrate(self.store)

    def ingest(self, sessions: Sequence[runs.SessionInput]) -> list[dict[str, Any]]:
        results = runs.ingest_sessions(
            self.store, DEFAULT_TENANT, sessions, datetime.now(UTC), self.settings.quality_pass_threshold
        )
        return [ingested(_jsonable(runs.summary_of(r.row)), r.created) for r in results]

    def ingest_otlp_file(self, path: Path, identity: str | None) -> list[dict[str, Any]]:
        return self.ingest(sessions_from_file(path, identity, self.settings.otlp_identity_attributes))

    def list_runs(self, **filters: Any) -> list[dict[str, Any]]:
        rows = run_store.list_runs(self.store, DEFAULT_TENANT, **filters)
        return [_jsonable(runs.summary_of(row)) for row in rows]

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        row = run_store.get_run(self.store, DEFAULT_TENANT, run_id)
        return None if row is None else _jsonable(runs.detail_of(row))

    def reputation(self, identity: str, as_of: date) -> dict[str, Any] | None:
        found = reputation_report(self.store, DEFAULT_TENANT, identity, as_of)
        return None if found is None else _jsonable(found)

    def suite_summary(self, suite: str, text: bool) -> dict[str, Any] | str | None:
        summary = suite_summary(self.store, DEFAULT_TENANT, suite)
        if summary is None:
            return None
        return summary.to_text() if text else _jsonable(summary.to_dict())

    def alerts(self) -> dict[str, Any]:
        return _jsonable(alert_report(self.store, DEFAULT_TENANT, self.settings, datetime.now(UTC)))

    def create_key(self, tenant: str, scopes: list[str], name: str) -> dict[str, Any]:
        created = create_key(self.store, tenant, scopes, name, datetime.now(UTC))
        return {"id": created.key_id, "key": created.key, "tenant": tenant, "scopes": created.scopes, "name": name}

    def list_keys(self) -> list[dict[str, Any]]:
        return [
            _jsonable({"id": r["key_id"], "tenant": r["tenant"], "scopes": list(r["scopes"]), "name": r["name"],
                       "created_at": r["created_at"], "revoked_at": r["revoked_at"]})
            for r in key_store.list_keys(self.store, None)
        ]  # fmt: skip

    def revoke_key(self, key_id: str) -> bool:
        return revoke_key(self.store, None, key_id, datetime.now(UTC))

    def close(self) -> None:
        self.store.close()


class ApiError(RuntimeError):
    pass


class HttpBackend:
    """The running server's API, with the operator key."""

    def __init__(self, url: str, key: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120)

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.http.request(method, path, **kwargs)
        if response.status_code >= 400 and response.status_code != 404:
            detail = response.json().get("detail", response.text) if response.content else response.reason_phrase
            raise ApiError(f"{method} {path}: {response.status_code} {detail}")
        return response

    def ingest(self, sessions: Sequence[runs.SessionInput]) -> list[dict[str, Any]]:
        body = [
            {"run_id": s.spec.run_id, "identity": s.spec.identity, "suite": s.spec.suite or None,
             "task_id": s.spec.task_id or None, "trial": s.spec.trial, "metadata": s.spec.metadata,
             "execution": s.execution, "events": s.events}
            for s in sessions
        ]  # fmt: skip
        response = self._call("POST", "/v1/sessions/batch", content=orjson.dumps(body))
        return [ingested(r, r["created"]) for r in response.json()["results"]]

    def ingest_otlp_file(self, path: Path, identity: str | None) -> list[dict[str, Any]]:
        """Through /v1/logs like any OTLP emitter, then finalize each session (the server names
        identities from the records; `identity` is not applied here)."""
        session_ids: dict[str, None] = {}
        with path.open("rb") as lines:
            for line in lines:
                if not line.strip():
                    continue
                for record in decode_json_body(line).records:
                    if record.session_id:
                        session_ids.setdefault(record.session_id)
                self._call("POST", "/v1/logs", content=line, headers={"content-type": "application/json"})
        records = []
        for session_id in session_ids:
            stored = self._call("GET", f"/v1/runs/{session_id}")
            if stored.status_code == 404:  # every record of the session was rejected
                continue
            run = self._call("POST", f"/v1/runs/{session_id}/finalize").json()
            records.append(ingested(run, stored.json()["status"] == "open"))
        return records

    def list_runs(self, **filters: Any) -> list[dict[str, Any]]:
        params = {k: v for k, v in filters.items() if v not in (None, "")}
        return self._call("GET", "/v1/runs", params=params).json()["runs"]

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        response = self._call("GET", f"/v1/runs/{run_id}")
        return None if response.status_code == 404 else response.json()

    def reputation(self, identity: str, as_of: date) -> dict[str, Any] | None:
        response = self._call("GET", f"/v1/identities/{identity}/reputation", params={"as_of": as_of.isoformat()})
        return None if response.status_code == 404 else response.json()

    def suite_summary(self, suite: str, text: bool) -> dict[str, Any] | str | None:
        params = {"format": "text" if text else "json"}
        response = self._call("GET", f"/v1/suites/{suite}/summary", params=params)
        if response.status_code == 404:
            return None
        return response.text.rstrip("\n") if text else response.json()

    def alerts(self) -> dict[str, Any]:
        return self._call("GET", "/v1/alerts").json()

    def create_key(self, tenant: str, scopes: list[str], name: str) -> dict[str, Any]:
        return self._call("POST", "/v1/keys", json={"tenant": tenant, "scopes": scopes, "name": name}).json()

    def list_keys(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/keys").json()["keys"]

    def revoke_key(self, key_id: str) -> bool:
        return self._call("DELETE", f"/v1/keys/{key_id}").status_code == 204

    def close(self) -> None:
        self.http.close()


def write_server_file(data_dir: Path, url: str) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SERVER_FILE
    path.write_bytes(orjson.dumps({"url": url, "pid": os.getpid()}))
    return path


def running_server(data_dir: Path) -> str | None:
    """The URL of a live server that owns this data directory, if any."""
    path = data_dir / SERVER_FILE
    try:
        info = orjson.loads(path.read_bytes())
        os.kill(int(info["pid"]), 0)
        httpx.get(f"{info['url']}/healthz", timeout=2).raise_for_status()
        return str(info["url"])
    except (OSError, ValueError, KeyError, TypeError, httpx.HTTPError):
        return None


def operator_key(data_dir: Path) -> str | None:
    key = os.environ.get("REPUTE_API_KEY")
    if key:
        return key
    path = data_dir / "admin.key"
    return path.read_text().strip() if path.exists() else None


def open_backend(settings: Settings) -> Backend:
    if settings.embedded:
        url = running_server(settings.data_dir)
        if url:
            key = operator_key(settings.data_dir)
            if key is None:
                raise ApiError(f"a server runs at {url} but no key: set REPUTE_API_KEY")
            return HttpBackend(url, key)
    return LocalBackend(settings)
