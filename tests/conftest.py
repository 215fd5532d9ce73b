"""Shared fixtures. One embedded store per test session (chdb allows one path per process); tests
stay independent by each using a tenant of its own."""

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from service.settings import Settings
from service.store.client import Store
from service.store.migrate import migrate

# Hypothesis profiles: `ci` (the default, and what .ci/run selects) draws the same examples on every run
# and has no deadline, so neither luck nor a loaded machine turns CI red; `fuzz` (`make fuzz`) draws fresh
# random examples each time, to find what `ci` does not.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True)
hypothesis_settings.register_profile("fuzz", deadline=None, database=None, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("REPUTE_HYPOTHESIS_PROFILE", "ci"))

FIXTURES = Path(__file__).resolve().parent / "data"  # sample inputs with expected outputs: data/README.md
CLICKHOUSE_IMAGE = "clickhouse/clickhouse-server:25.8.3.66"  # the version docker-compose.yml pins


@pytest.fixture(scope="session", autouse=True)
def server_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The servers the tests start record themselves in a per-user registry of this session's own
    (service.client.server_file), never in the user's ~/.config/repute."""
    config = tmp_path_factory.mktemp("config")
    previous = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(config)
    yield config / "repute" / "servers"
    if previous is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = previous


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("repute-data")


@pytest.fixture(scope="session")
def embedded_store(data_dir: Path) -> Iterator[Store]:
    store = Store(Settings(data_dir=data_dir, clickhouse_url=None))
    migrate(store)
    yield store
    store.close()


def _docker_available() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    url = os.environ.get("REPUTE_TEST_CLICKHOUSE_URL")
    if url:
        yield url
        return
    if not _docker_available():
        pytest.skip("no ClickHouse server: set REPUTE_TEST_CLICKHOUSE_URL or run a Docker engine (testcontainers)")
    from testcontainers.community.clickhouse import ClickHouseContainer

    with ClickHouseContainer(CLICKHOUSE_IMAGE) as container:
        host, port = container.get_container_host_ip(), container.get_exposed_port(8123)
        yield f"http://{container.username}:{container.password}@{host}:{port}"


@pytest.fixture(scope="session")
def server_store(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    database = f"repute_test_{uuid.uuid4().hex[:8]}"
    store = Store(
        Settings(data_dir=tmp_path_factory.mktemp("server"), clickhouse_url=f"{server_url.rstrip('/')}/{database}")
    )
    migrate(store)
    yield store
    store.client.command(f"DROP DATABASE IF EXISTS `{database}`")
    store.close()


def _database_beside(store: Store, database: str) -> Store:
    """A store on another database of the same ClickHouse: the embedded engine, or the same server."""
    if store.settings.embedded:
        return Store(Settings(data_dir=store.settings.data_dir, database=database))
    server = store.dsn.rsplit("/", 1)[0]
    return Store(Settings(data_dir=store.settings.data_dir, clickhouse_url=f"{server}/{database}"))


@pytest.fixture
def fresh_database(embedded_store: Store) -> Iterator[Store]:
    """A database of its own on the embedded engine, to migrate step by step."""
    store = _database_beside(embedded_store, f"migration_{uuid.uuid4().hex[:8]}")
    yield store
    store.client.command(f"DROP DATABASE IF EXISTS `{store.database}`")


@pytest.fixture(scope="module", params=["embedded", "server"])
def own_store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """A migrated database of the test module's own, on the embedded engine and on a server when one is
    available: for tests that change what holds for a whole store (the half-life in force, merges, a
    sweeper over every tenant), so that neither their change nor the other tests' data reach the other."""
    store = _database_beside(request.getfixturevalue(f"{request.param}_store"), f"own_{uuid.uuid4().hex[:8]}")
    migrate(store)
    yield store
    store.client.command(f"DROP DATABASE IF EXISTS `{store.database}`")


@pytest.fixture(params=["embedded", "server"])
def store(request: pytest.FixtureRequest) -> Store:
    """Every store test runs on the embedded engine, and on a server when one is available."""
    return request.getfixturevalue(f"{request.param}_store")


@pytest.fixture
def tenant() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


# --- the API on a live server -------------------------------------------------------------------

from datetime import UTC, datetime  # noqa: E402

import httpx  # noqa: E402

from service.api.app import create_app  # noqa: E402
from service.services.keys import SCOPES, create_key  # noqa: E402
from service.testing.live import serve_in_thread  # noqa: E402


@pytest.fixture(scope="session")
def base_url(embedded_store: Store, data_dir: Path) -> Iterator[str]:
    app = create_app(Settings(data_dir=data_dir), store=embedded_store)
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture
def make_client(base_url: str, embedded_store: Store) -> Iterator:
    """make_client(tenant, scopes) -> an httpx client on the live server holding a new key."""
    clients: list[httpx.Client] = []

    def make(tenant: str, scopes: tuple[str, ...] = SCOPES) -> httpx.Client:
        key = create_key(embedded_store, tenant, list(scopes), "test", datetime.now(UTC)).key
        client = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=120)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client, tenant: str) -> httpx.Client:
    """A client with every scope on this test's own tenant."""
    return make_client(tenant)


@pytest.fixture(scope="session")
def demo_fleet(embedded_store: Store) -> tuple[str, datetime]:
    """`repute demo` (21 days, 12 identities, seed 7) stored in tenant `default` up to the real now, the
    tenant the provisioned Grafana watches: (the degrading identity, now)."""
    from service.services.demo import DemoOptions, seed_demo

    now = datetime.now(UTC)
    summary = seed_demo(embedded_store, "default", DemoOptions(days=21, identities=12, seed=7), now, 0.8)
    return summary.degrading, now


@pytest.fixture
def cli_as(base_url: str, embedded_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """cli_as(tenant, scopes) points the CLI (run in this process with CliRunner) at the live server,
    which owns the store, as that tenant."""
    from service.client.server_file import write_server_file
    from service.settings import get_settings

    def point(tenant: str, scopes: tuple[str, ...] = SCOPES) -> None:
        write_server_file(tmp_path, base_url)
        key = create_key(embedded_store, tenant, list(scopes), "cli", datetime.now(UTC)).key
        monkeypatch.setenv("REPUTE_DATA_DIR", str(tmp_path))
        monkeypatch.setenv("REPUTE_API_KEY", key)
        get_settings.cache_clear()

    yield point
    get_settings.cache_clear()
