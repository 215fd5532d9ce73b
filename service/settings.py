"""Runtime configuration, read from the environment with the prefix REPUTE_, else from a `.env` file in the
working directory. A setting that takes a list reads names separated by commas (`user.email, customer.secret`)
or a JSON list of strings alike; an invalid value is InvalidSetting, whose message is one line naming the
variable and the form it expects."""

import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import AliasChoices, BeforeValidator, Field, ValidationError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

ENV_PREFIX = "REPUTE_"
LIST_FORM = 'names separated by commas (a.b, c.d) or a JSON list of strings (["a.b", "c.d"])'


class InvalidSetting(ValueError):
    """A setting's value cannot be read; the message names its variable and the form it expects."""


def _names(value: object) -> object:
    """A list setting as written in the environment: JSON when it starts with `[`, else split at commas,
    each name stripped of the spaces around it (an empty value is the empty list). A name holding quotes
    or brackets is refused: a list half written as JSON would otherwise name nothing, and redact nothing."""
    if not isinstance(value, str):
        return value
    names = _split(value.strip())
    if not isinstance(names, list) or not all(isinstance(name, str) and _is_name(name) for name in names):
        raise ValueError(f"expected {LIST_FORM}")
    return names


def _split(text: str) -> object:
    if not text.startswith("["):
        return [name.strip() for name in text.split(",")] if text else []
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_name(name: str) -> bool:
    return bool(name) and not any(mark in name for mark in NOT_IN_A_NAME)


NOT_IN_A_NAME = "\"'[]{}"


# Not JSON-decoded by the settings sources: _names reads both forms.
Names = Annotated[list[str], NoDecode, BeforeValidator(_names)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", extra="ignore", populate_by_name=True)

    data_dir: Path = Path(".repute")
    clickhouse_url: str | None = Field(
        default=None, description="chdb://<path> (embedded, the default) or http(s)://user:pass@host:8123/db"
    )
    database: str = Field(default="repute", description="database used when the URL names none")
    cluster: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        validation_alias=AliasChoices("REPUTE_CLICKHOUSE_CLUSTER", "REPUTE_CLUSTER"),
        description="a ClickHouse cluster's name: Replicated and Distributed tables (docs/cluster.md)",
    )

    host: str = "127.0.0.1"
    port: int = 8000
    url: str | None = Field(
        default=None, description="the Repute server CLI commands use (also `repute --url`); default: found"
    )

    # Caps on the work of one request (413 beyond; README "Limits").
    max_body_bytes: int = Field(default=16 * 1024 * 1024, description="bytes of a request body, also once inflated")
    max_events_per_run: int = Field(default=100_000, description="events of one run: sent, streamed or OTLP-mapped")
    max_runs_per_batch: int = Field(default=1_000, description="runs in one POST /v1/sessions/batch")
    max_events_per_request: int = Field(
        default=100_000, description="events in one request (a batch's runs together), or OTLP log records"
    )
    max_tenant_bytes_in_flight: int = Field(
        default=32 * 1024 * 1024,
        description="bytes of one tenant's request bodies being read or handled at once (429 beyond; at least"
        " max_body_bytes)",
    )
    body_read_timeout_seconds: float = Field(
        default=60.0, gt=0, description="seconds a request's body may take to arrive whole (408 beyond)"
    )
    max_profiles_per_tenant: int = Field(default=100, ge=0, description="a tenant's own diagnosis profiles")
    max_profile_identities_per_tenant: int = Field(
        default=1_000, ge=0, description="identities and globs a tenant's profiles name, all together"
    )
    write_concurrency: int = Field(
        default=2,
        ge=1,
        description="writes one tenant runs at once while it is alone (the write pool has one worker more, for"
        " the others); more wait in its queue, reads never do",
    )
    switch_interval_ms: float = Field(
        default=0.5,
        gt=0,
        le=100,
        description="how long a thread running Python keeps the interpreter's lock while another waits for it"
        " (sys.setswitchinterval; Python's own default is 5): shorter, a read waits less behind a long write",
    )
    # The embedded engine's memory (README "Memory"); a ClickHouse server takes its own config (clickhouse/).
    engine_memory_mib: int = Field(
        default=3072,
        ge=256,
        description="the embedded engine's memory, queries and caches together (max_server_memory_usage): a"
        " query that would go past it fails, instead of the process growing",
    )
    engine_cache_mib: int = Field(
        default=256, ge=0, description="the embedded engine's cache of index marks (mark_cache_size)"
    )
    run_events_ttl_days: int = 90
    reputation_refresh_seconds: int = 60
    reputation_half_life_days: float | None = Field(
        default=None, gt=0, description="decay half-life of reputation events in days (SPEC §7.1); unset = no decay"
    )
    signals_per_source_per_day: int = Field(
        default=100,
        ge=0,
        description="posted events counted per (source, identity, UTC day of arrival); the rest are flagged",
    )
    signal_max_age_days: int = Field(
        default=7, ge=0, description="days a posted signal's timestamp may lie before its arrival (admin keys: any)"
    )

    quality_pass_threshold: float = 0.8
    session_idle_minutes: float = 30.0
    session_sweep_seconds: float = 60.0
    trace_settle_seconds: float = 10.0
    otlp_identity_attributes: Names = ["gen_ai.agent.id", "agent.id", "masque", "service.name"]
    # Personal data in telemetry, stored as a per-tenant pseudonym (service/otlp/redaction.py).
    redact_attributes: Names = ["user.email"]
    signing_keys_dir: Path | None = Field(
        default=None,
        description="where each tenant's statement signing keys are kept (SPEC §15); default: <data_dir>/signing-keys",
    )

    alert_webhook_url: str | None = None
    alert_interval_seconds: float = 60.0
    alert_identity_drop_points: float = 10.0
    alert_identity_min_confidence: float = 0.3
    alert_fleet_trust_drop_points: float = 5.0
    alert_fleet_min_runs: int = 5
    alert_failure_surge_ratio: float = 2.0
    alert_failure_surge_min_runs: int = 5
    alert_unsafe_share: float = 0.2
    alert_execution_error_surge_ratio: float = 2.0
    alert_execution_error_min_runs: int = 3

    @property
    def dsn(self) -> str:
        return self.clickhouse_url or f"chdb://{self.data_dir.resolve() / 'clickhouse'}"

    @property
    def embedded(self) -> bool:
        return self.dsn.startswith("chdb://")

    @property
    def embedded_path(self) -> Path | None:
        """Where the embedded store lives; None on a ClickHouse server."""
        return Path(self.dsn.removeprefix("chdb://")) if self.embedded else None


def _variable(location: tuple[int | str, ...]) -> str:
    name = str(location[0]) if location else "?"
    return name if name.startswith(ENV_PREFIX) else ENV_PREFIX + name.upper()


def _one_line(exc: ValidationError) -> str:
    error = exc.errors()[0]
    expected = str(error["msg"]).removeprefix("Value error, ")
    expected = expected[:1].lower() + expected[1:]
    return f"{_variable(error['loc'])}: {expected}; got {error['input']!r}"


@lru_cache
def get_settings() -> Settings:
    """The settings of the environment; raises InvalidSetting."""
    try:
        return Settings()
    except ValidationError as exc:
        raise InvalidSetting(_one_line(exc)) from None
