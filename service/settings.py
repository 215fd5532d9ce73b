"""Runtime configuration, read from the environment with the prefix REPUTE_."""

from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="REPUTE_", extra="ignore", populate_by_name=True)

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
    write_concurrency: int = Field(
        default=2,
        ge=1,
        description="writes one tenant runs at once while it is alone (the write pool has one worker more, for"
        " the others); more wait in its queue, reads never do",
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
    otlp_identity_attributes: list[str] = ["gen_ai.agent.id", "agent.id", "masque", "service.name"]
    # Personal data in telemetry, stored as a per-tenant pseudonym (SPEC §3.2; service/otlp/redaction.py).
    redact_attributes: list[str] = ["user.email"]
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


@lru_cache
def get_settings() -> Settings:
    return Settings()
