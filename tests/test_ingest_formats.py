"""`repute ingest` reads the trace exports other projects record (tests/data/real): OTLP/JSON, Tempo's
pre-1.0 names, Jaeger query-API exports, OTel SDK span lists and any-agent's traces, one span per line.
Each is converted to spans losslessly, sent as OTLP and finalized as the run its spans make (SPEC §3.4)."""

import orjson
import pytest
from typer.testing import CliRunner

from service.cli import app as cli
from service.traces import decode_json_traces
from service.traces.otlp_json import encode_json_traces
from tests.test_traces_real import FACTS, FILES, REAL, real_spans


@pytest.mark.parametrize("name", FILES)
def test_spans_survive_the_trip_through_otlp_json(name: str) -> None:
    spans = real_spans(name).spans
    assert decode_json_traces(orjson.dumps(encode_json_traces(spans))).spans == spans


@pytest.mark.parametrize("name", FILES)
def test_repute_ingest_stores_the_run_the_file_shows(cli_as, make_client, tenant: str, name: str) -> None:
    facts = FACTS[name]
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(REAL / name)])
    assert ingested.exit_code == 0, ingested.output
    assert "1 file: 1 run stored, 0 already present, 0 files failed" in ingested.stderr, ingested.output
    conversations = [conversation["value"] for conversation in facts["conversation_ids"]]
    client = make_client(tenant)
    run_id = conversations[0] if conversations else facts["traces"][0]
    run = client.get(f"/v1/runs/{run_id}").json()
    children = client.get("/v1/runs", params={"parent": run_id}).json()["runs"]
    runs = [run, *children]  # each agent's own run (SPEC §3.5), the whole trace between them
    assert (run["status"], run["kind"]) == ("finalized", "trace")
    assert sum(r["tool_calls"] for r in runs) == len(facts["tool_calls"])
    assert sum(r["total_tokens"] for r in runs) == facts["total_tokens"]
    assert len(runs) == len(_agents(facts)), [r["identity"] for r in runs]
    listed = [line.split("\t")[0].removeprefix("└ ") for line in ingested.stdout.splitlines()[1:]]
    assert listed == [run["run_id"], *(child["run_id"] for child in run["child_runs"])]  # each agent's run, listed
    assert {child["run_id"] for child in run["child_runs"]} == {child["run_id"] for child in children}
    again = CliRunner().invoke(cli, ["ingest", str(REAL / name)])
    assert "0 runs stored, 1 already present" in again.stderr, again.output


def _agents(facts: dict) -> set[str]:
    """The identities of a file's agent spans (gen_ai.agent.id, else gen_ai.agent.name, else the span's
    service), and the service's own when it has none: a run for each."""
    named = {
        agent["gen_ai.agent.id"] or agent["gen_ai.agent.name"] or agent["service_name"]
        for agent in facts["agent_spans"]
    }
    return named or {"the root agent"}


def test_repute_ingest_keeps_the_profile_and_the_parent_a_session_file_names(
    cli_as, make_client, tenant: str, tmp_path
) -> None:
    """Issue #39: `repute ingest` once sent neither, so the run was judged under the default profile and
    lost its parent."""
    parent = {"run_id": "ingest-parent", "identity": "lead", "events": [{"event": "decision"}]}
    child = {**parent, "run_id": "ingest-child", "identity": "helper", "profile": "long-session",
             "parent_run_id": "ingest-parent"}  # fmt: skip
    cli_as(tenant)
    for name, run in (("a-parent.json", parent), ("b-child.json", child)):
        (tmp_path / name).write_bytes(orjson.dumps(run))
        ingested = CliRunner().invoke(cli, ["ingest", str(tmp_path / name)])
        assert ingested.exit_code == 0, ingested.output
    stored = make_client(tenant).get("/v1/runs/ingest-child").json()
    assert (stored["parent_run_id"], stored["profile"]["name"]) == ("ingest-parent", "long-session")
