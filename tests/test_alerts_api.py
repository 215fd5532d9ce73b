"""GET /v1/alerts, `repute alerts`, and the evaluator started by the server's lifespan (SPEC §11)."""

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli import app as cli
from service.settings import Settings
from service.store.client import Store
from service.testing.live import free_port
from tests.fleet import FleetWriter, unsafe_day


@pytest.fixture
def degraded_tenant(embedded_store: Store, tenant: str) -> str:
    """A quarter of the tenant's runs of the last 24 hours (until the real now) are unsafe."""
    unsafe_day(FleetWriter(embedded_store, tenant), now=datetime.now(UTC))
    return tenant


def test_get_alerts_lists_what_fires_for_the_key_s_tenant(make_client, degraded_tenant: str, tenant: str) -> None:
    response = make_client(degraded_tenant, ("read",)).get("/v1/alerts")
    assert response.status_code == 200, response.text
    body = response.json()
    assert [(a["alert"], a["severity"], a["subject"]) for a in body["alerts"]] == [
        ("unsafe_share", "critical", "fleet")
    ]
    assert body["alerts"][0]["value"] == pytest.approx(6 / 25)
    assert "unsafe for production" in body["alerts"][0]["message"]
    assert make_client(f"{tenant}-quiet", ("read",)).get("/v1/alerts").json()["alerts"] == []


def test_repute_alerts(cli_as, degraded_tenant: str) -> None:
    cli_as(degraded_tenant, ("read",))
    as_json = CliRunner().invoke(cli, ["alerts", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert [a["alert"] for a in orjson.loads(as_json.stdout)["alerts"]] == ["unsafe_share"]
    as_table = CliRunner().invoke(cli, ["alerts"])
    assert as_table.exit_code == 0 and "unsafe_share" in as_table.stdout


def test_the_server_runs_the_evaluator_only_with_a_webhook(embedded_store: Store, tmp_path: Path) -> None:
    quiet = create_app(Settings(data_dir=tmp_path, alert_webhook_url=None), store=embedded_store)
    hooked = Settings(data_dir=tmp_path, alert_webhook_url=f"http://127.0.0.1:{free_port()}/hook")
    app = create_app(hooked, store=embedded_store)

    async def serve_and_stop() -> None:
        async with quiet.router.lifespan_context(quiet):
            assert quiet.state.alert_evaluator is None
        async with app.router.lifespan_context(app):
            assert app.state.alert_evaluator is not None and app.state.alert_evaluator.running
        assert app.state.alert_evaluator.stopping

    asyncio.run(serve_and_stop())
