"""Each alert rule (sql/alerts/) fires on a scenario built for it, alone, and stays silent on a healthy
fleet (SPEC §11). Scenarios are written relative to a fixed `NOW` and evaluated at it."""

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from service.alerts import RULES, evaluate
from service.settings import Settings
from service.store.client import Store
from service.store.queries import QUERIES
from tests.fleet import NOW, FleetWriter, steady_day, steady_fleet, unsafe_day

SETTINGS = Settings(data_dir=Path("unused"))
Scenario = Callable[[FleetWriter], None]


def fired(store: Store, tenant: str) -> set[tuple[str, str]]:
    return {(a.alert, a.subject) for a in evaluate(store, tenant, SETTINGS, NOW)}


def falling_identity(writer: FleetWriter) -> None:
    """agent-falling: trust 95 for weeks, 20 over the last 7 days. agent-new falls as hard but has too few
    events behind its score (confidence 0.1) to alert on."""
    steady_fleet(writer)
    for day in range(30):
        for k in range(4):
            at = NOW - timedelta(days=day, hours=2 + 5 * k)
            writer.run("agent-falling", at, trust=20 if day < 7 else 95, readiness="review_recommended")
    for k in range(5):
        writer.run("agent-new", NOW - timedelta(days=10, hours=k), trust=95)
        writer.run("agent-new", NOW - timedelta(days=1, hours=k), trust=20, readiness="review_recommended")
    writer.flush()


def recent_day(writer: FleetWriter, trust: int = 92, readiness: str = "ready_for_runtime", failing: int = 0) -> None:
    """A healthy history (days 1-29) and a last day of 24 runs shaped by the scenario."""
    steady_fleet(writer, range(1, 30))
    for n in range(24):
        failures = ["memory_degradation"] if n < failing else []
        writer.run(f"agent-{n % 6:02d}", NOW - timedelta(hours=1 + n / 2), trust=trust, readiness=readiness,
                   failures=failures)  # fmt: skip
    writer.flush()


def infrastructure_incident(writer: FleetWriter) -> None:
    """The usual day plus six setup/clone_error runs. They are also trust 0 and unsafe: execution errors
    are not quality evidence, so neither the trust nor the unsafe rule may see them."""
    steady_fleet(writer, range(1, 30))
    steady_day(writer, 0)
    for n in range(6):
        writer.run(f"agent-{n:02d}", NOW - timedelta(hours=3, minutes=n), trust=0,
                   readiness="unsafe_for_production", error=("setup", "clone_error"))  # fmt: skip
    writer.flush()


def trust_falls(writer: FleetWriter) -> None:
    recent_day(writer, trust=80, readiness="review_recommended")


def memory_failures_surge(writer: FleetWriter) -> None:
    recent_day(writer, failing=12)


SCENARIOS: dict[str, tuple[Scenario, set[tuple[str, str]]]] = {
    "identity_score_drop": (falling_identity, {("identity_score_drop", "agent-falling")}),
    "fleet_trust_drop": (trust_falls, {("fleet_trust_drop", "fleet")}),
    "failure_surge": (memory_failures_surge, {("failure_surge", "memory_degradation")}),
    "unsafe_share": (unsafe_day, {("unsafe_share", "fleet")}),
    "execution_error_surge": (infrastructure_incident, {("execution_error_surge", "setup/clone_error")}),
}


def test_every_rule_file_is_registered_and_has_a_scenario() -> None:
    files = {entry.name.removesuffix(".sql") for entry in (QUERIES / "alerts").iterdir()}
    assert {rule.name for rule in RULES} == files == set(SCENARIOS)


@pytest.mark.parametrize("rule", sorted(SCENARIOS))
def test_rule_fires_alone_on_its_scenario(embedded_store: Store, tenant: str, rule: str) -> None:
    build, expected = SCENARIOS[rule]
    build(FleetWriter(embedded_store, tenant))
    assert fired(embedded_store, tenant) == expected


def test_a_healthy_fleet_fires_nothing(embedded_store: Store, tenant: str) -> None:
    steady_fleet(FleetWriter(embedded_store, tenant))
    assert fired(embedded_store, tenant) == set()


def test_alert_rows_carry_value_baseline_and_message(embedded_store: Store, tenant: str) -> None:
    memory_failures_surge(FleetWriter(embedded_store, tenant))
    (alert,) = evaluate(embedded_store, tenant, SETTINGS, NOW)
    assert alert.severity == "warning"
    assert alert.value == pytest.approx(12 / 24)
    assert alert.baseline == pytest.approx(1 / 25)  # one memory_degradation run a day of 25 quality runs
    assert alert.message.startswith("memory_degradation in 12 of 24 runs")


def test_thresholds_come_from_settings(embedded_store: Store, tenant: str) -> None:
    memory_failures_surge(FleetWriter(embedded_store, tenant))
    strict = Settings(data_dir=Path("unused"), alert_failure_surge_min_runs=13)
    assert evaluate(embedded_store, tenant, strict, NOW) == []


def test_rules_read_only_their_tenant(embedded_store: Store, tenant: str) -> None:
    unsafe_day(FleetWriter(embedded_store, tenant))
    assert fired(embedded_store, f"{tenant}-other") == set()
