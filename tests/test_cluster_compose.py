"""docker-compose.cluster.yml (SPEC §14, docs/cluster.md): 2 shards x 2 replicas, ClickHouse Keeper and the
service with several workers. Its structure is checked everywhere; `docker compose config` where a docker
CLI with compose exists; the cluster itself, with the service on it, where a Docker engine runs."""

import random
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from service.testing.factory import make_session

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.cluster.yml"
SERVER_IMAGE = "clickhouse/clickhouse-server:"


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())


def _nodes(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if service.get("image", "").startswith(SERVER_IMAGE) and "REPUTE_SHARD" in service.get("environment", {})
    }


def _mounted(service: dict[str, Any], target: str) -> Path:
    """The file of this repository that the service mounts at `target`."""
    source = next(volume.split(":")[0] for volume in service["volumes"] if volume.split(":")[1] == target)
    return ROOT / source


def test_four_nodes_make_two_shards_of_two_replicas_coordinated_by_keeper(compose: dict[str, Any]) -> None:
    nodes = _nodes(compose)
    places = {
        name: (node["environment"]["REPUTE_SHARD"], node["environment"]["REPUTE_REPLICA"])
        for name, node in nodes.items()
    }
    assert Counter(shard for shard, _ in places.values()) == {"01": 2, "02": 2}
    assert all(replica == name == nodes[name]["hostname"] for name, (_, replica) in places.items())
    config = "/etc/clickhouse-server/config.d/cluster.xml"
    files = {_mounted(node, config) for node in nodes.values()}
    assert len(files) == 1 and files.pop().is_file()
    for node in nodes.values():
        assert node["depends_on"] == {"keeper": {"condition": "service_healthy"}} and "healthcheck" in node

    keeper = compose["services"]["keeper"]
    assert "keeper" in keeper["command"] and "healthcheck" in keeper
    keeper_port = ElementTree.parse(_mounted(keeper, "/etc/clickhouse-keeper/keeper.xml")).findtext(
        "keeper_server/tcp_port"
    )

    cluster_xml = ElementTree.parse(_mounted(next(iter(nodes.values())), config)).getroot()
    (cluster,) = cluster_xml.find("remote_servers")
    shards = [
        (shard.findtext("internal_replication"), [replica.findtext("host") for replica in shard.findall("replica")])
        for shard in cluster.findall("shard")
    ]
    by_shard = sorted(sorted(n for n, (s, _) in places.items() if s == shard) for shard in ("01", "02"))
    assert [hosts for _, hosts in shards] == by_shard
    assert all(internal == "true" for internal, _ in shards)
    assert cluster_xml.findtext("zookeeper/node/host") == "keeper" == keeper["hostname"]
    assert cluster_xml.findtext("zookeeper/node/port") == keeper_port
    assert {element.get("from_env") for element in cluster_xml.find("macros")} == {"REPUTE_SHARD", "REPUTE_REPLICA"}


def test_the_service_serves_with_several_workers_on_the_cluster(compose: dict[str, Any]) -> None:
    repute = compose["services"]["repute"]
    nodes = _nodes(compose)
    command = repute["command"]
    assert command[:2] == ["repute", "serve"] and int(command[command.index("--workers") + 1]) > 1
    cluster_xml = ElementTree.parse(ROOT / "cluster/clickhouse/cluster.xml").getroot()
    assert repute["environment"]["REPUTE_CLICKHOUSE_CLUSTER"] == cluster_xml.find("remote_servers")[0].tag
    host = httpx.URL(
        repute["environment"]["REPUTE_CLICKHOUSE_URL"].replace("${REPUTE_CLICKHOUSE_PASSWORD:-repute}", "x")
    ).host
    assert host in nodes
    assert repute["depends_on"] == {name: {"condition": "service_healthy"} for name in nodes}


def _compose_cli() -> list[str] | None:
    for command in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(command[0]) and subprocess.run([*command, "version"], capture_output=True).returncode == 0:
            return command
    return None


def test_docker_compose_accepts_the_file() -> None:
    command = _compose_cli()
    if command is None:
        pytest.skip("no docker CLI with compose here (neither `docker compose` nor `docker-compose` runs)")
    result = subprocess.run([*command, "-f", str(COMPOSE), "config", "--quiet"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def live_cluster() -> Iterator[Any]:
    if _compose_cli() != ["docker", "compose"]:
        pytest.skip("no `docker compose` here: the cluster test needs Docker with the compose plugin")
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.skip("no Docker engine here (`docker info` fails): the cluster test needs one")
    from testcontainers.compose import DockerCompose

    with DockerCompose(ROOT, compose_file_name=COMPOSE.name, build=True, wait=True) as cluster:
        yield cluster


def _query(cluster: Any, node: str, sql: str) -> str:
    stdout, _, _ = cluster.exec_in_container(
        ["bash", "-c", f'clickhouse-client --user "$CLICKHOUSE_USER" --password "$CLICKHOUSE_PASSWORD" -q "{sql}"'],
        service_name=node,
    )
    return stdout.strip()


def test_runs_written_through_the_service_are_sharded_replicated_and_read_back_at_once(live_cluster: Any) -> None:
    """Each run is read back right after its finalize, from whichever replica answers; a re-post changes
    nothing; the runs spread over both shards, and each shard's replicas hold the same rows."""
    key, _, _ = live_cluster.exec_in_container(["cat", "/data/admin.key"], service_name="repute")
    host = live_cluster.get_service_host("repute", 8000)
    port = live_cluster.get_service_port("repute", 8000)
    rng = random.Random(31)
    sessions = [make_session(rng, f"cluster-run-{i}", f"agent-{i % 4}", 30) for i in range(24)]
    with httpx.Client(base_url=f"http://{host}:{port}", headers={"Authorization": f"Bearer {key.strip()}"}) as api:
        for session in sessions:
            assert api.post("/v1/sessions", content=orjson.dumps(session)).status_code == 201
            assert api.get(f"/v1/runs/{session['run_id']}").status_code == 200
        before = {f"agent-{i}": api.get(f"/v1/identities/agent-{i}/reputation").json()["events"] for i in range(4)}
        assert api.post("/v1/sessions", content=orjson.dumps(sessions[0])).status_code == 200
        after = {f"agent-{i}": api.get(f"/v1/identities/agent-{i}/reputation").json()["events"] for i in range(4)}
    assert after == before and sum(before.values()) > 0
    per_shard = _query(live_cluster, "ch-s1-r1", "SELECT shardNum(), uniqExact(run_id) FROM repute.runs GROUP BY 1")
    assert len(per_shard.splitlines()) == 2
    for first, second in (("ch-s1-r1", "ch-s1-r2"), ("ch-s2-r1", "ch-s2-r2")):
        _query(live_cluster, second, "SYSTEM SYNC REPLICA repute.runs_local")
        count = "SELECT count() FROM repute.runs_local FINAL"
        assert _query(live_cluster, first, count) == _query(live_cluster, second, count) != "0"
