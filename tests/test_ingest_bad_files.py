"""`repute ingest` over a directory holding malformed exports (issue #37): each bad file is reported in one
line, every other file is stored, and the exit code is 2 when any file failed; spans the server refuses in
an OTLP `partialSuccess` count as a failure of their file."""

from pathlib import Path

import orjson
from typer.testing import CliRunner

from service.cli import app as cli
from tests.traces_support import otlp_json, proto_span, request_of

GOOD_SESSION = {"run_id": "good-session", "identity": "agent-good", "events": [{"event": "tool_call", "tool": "t"}]}
BAD_FILES = {
    "jaeger_non_object.json": orjson.dumps({"data": [5, {"traceID": "ab", "spans": [], "processes": {}}]}),
    "jaeger_spans_number.json": orjson.dumps({"data": [{"traceID": "ab", "spans": 5, "processes": {}}]}),
    "sdk_spans_number.json": orjson.dumps({"spans": 5, "start_time": "x"}),
    "infinity.json": b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": Infinity}]}]}]}',
    "deep.json": b"[" * 200_000 + b"]" * 200_000,
    "deep_otlp.json": b'{"resourceSpans": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
}


def _good_trace() -> bytes:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "agent-good"}
    span = proto_span(1, trace_id=bytes.fromhex("11" * 16), name="invoke_agent good", attributes=attributes)
    return orjson.dumps(otlp_json(request_of(span)))


def test_bad_files_are_reported_in_one_line_each_and_the_others_stored(
    cli_as, make_client, tenant: str, tmp_path: Path
) -> None:
    """Broken on purpose: `_file_failed` answering False for what is not an ApiError (the first bad file's
    error ends the ingest) → this test fails."""
    folder = tmp_path / "exports"
    folder.mkdir()
    for name, data in BAD_FILES.items():
        (folder / name).write_bytes(data)
    (folder / "a_session.json").write_bytes(orjson.dumps(GOOD_SESSION))
    (folder / "z_trace.json").write_bytes(_good_trace())
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(folder)])
    assert ingested.exit_code == 2, ingested.output
    assert "8 files: 2 runs stored, 0 already present, 6 files failed" in ingested.stderr, ingested.output
    reported = [line for line in ingested.stderr.splitlines() if line.startswith("skipped ")]
    assert sorted(line.split()[1].rsplit("/", 1)[1].rstrip(":") for line in reported) == sorted(BAD_FILES), (
        ingested.stderr
    )
    assert "Traceback" not in ingested.output
    client = make_client(tenant)
    assert client.get("/v1/runs/good-session").json()["status"] == "finalized"
    assert client.get(f"/v1/runs/{'11' * 16}").json()["status"] == "finalized"


def test_spans_refused_in_partial_success_fail_their_file(cli_as, make_client, tenant: str, tmp_path: Path) -> None:
    """The server stores the spans it can and refuses the others (here: one ending before 1970-05-01) in
    `partialSuccess`: the run of the stored spans is finalized, the file counts as failed and says how many
    spans were refused. Broken on purpose: `_refused_items` answering 0 → this test fails."""
    trace = bytes.fromhex("22" * 16)
    good = proto_span(1, trace_id=trace, name="invoke_agent good", attributes={"gen_ai.operation.name": "invoke_agent"})
    too_early = proto_span(2, trace_id=trace, parent=1, start=1_000, end=2_000)
    path = tmp_path / "partly.json"
    path.write_bytes(orjson.dumps(otlp_json(request_of(good, too_early))))
    cli_as(tenant)
    ingested = CliRunner().invoke(cli, ["ingest", str(path)])
    assert ingested.exit_code == 2, ingested.output
    assert "1 file: 1 run stored, 0 already present, 1 file failed" in ingested.stderr, ingested.output
    assert "1 spans refused" in ingested.stderr, ingested.stderr
    assert make_client(tenant).get(f"/v1/runs/{trace.hex()}").json()["status"] == "finalized"
