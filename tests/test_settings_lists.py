"""Settings that take a list (REPUTE_REDACT_ATTRIBUTES, REPUTE_OTLP_IDENTITY_ATTRIBUTES) read names separated
by commas and a JSON list alike, from the environment and from a `.env` file; a value of neither form is one
line naming the setting and the form it expects, exit 2, before the server makes anything (issue #45)."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import orjson
import pytest

from service.otlp.redaction import pseudonym
from service.settings import InvalidSetting, Settings, get_settings
from service.testing.live import free_port, start_server_process
from service.vocab import ADMIN_KEY_FILE, DEFAULT_TENANT

EMAIL, SECRET, AGENT = "ada@example.com", "card-4242", "agent-of-the-team"
JSON_HEADERS = {"content-type": "application/json"}
LIST_FORM = 'names separated by commas (a.b, c.d) or a JSON list of strings (["a.b", "c.d"])'


@pytest.mark.parametrize(
    "written",
    ["user.email,customer.secret", " user.email ,  customer.secret ", '["user.email", "customer.secret"]'],
)
def test_a_list_reads_commas_and_json_alike(written: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if the comma form is decoded as JSON again (pydantic-settings' default for a list)."""
    monkeypatch.setenv("REPUTE_REDACT_ATTRIBUTES", written)
    assert Settings().redact_attributes == ["user.email", "customer.secret"]


def test_an_empty_list_redacts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPUTE_REDACT_ATTRIBUTES", "")
    assert Settings().redact_attributes == []
    monkeypatch.setenv("REPUTE_REDACT_ATTRIBUTES", "[]")
    assert Settings().redact_attributes == []


@pytest.mark.parametrize("written", ['["user.email",', "user.email,,x", "[1, 2]", '"user.email"', "user.email,[x]"])
def test_a_list_of_neither_form_names_the_setting_and_the_form(written: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails if a half-written JSON list is taken for names (`"user.email"` would redact nothing)."""
    monkeypatch.setenv("REPUTE_REDACT_ATTRIBUTES", written)
    get_settings.cache_clear()
    with pytest.raises(InvalidSetting) as raised:
        get_settings()
    get_settings.cache_clear()
    assert str(raised.value) == f"REPUTE_REDACT_ATTRIBUTES: expected {LIST_FORM}; got {written!r}"


def _without_settings() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.startswith("REPUTE_")}


@pytest.mark.parametrize("command", [["serve"], ["runs"], ["judge", "absent.jsonl"]])
@pytest.mark.parametrize("source", ["environment", ".env"])
def test_an_invalid_list_stops_every_command_with_one_line(command: list[str], source: str, tmp_path: Path) -> None:
    """Fails if main() lets InvalidSetting through (a traceback, exit 1), or if `serve` reads the settings
    after making the store and its admin key."""
    written = '["user.email", "customer.secret"'
    env = {**_without_settings(), "REPUTE_DATA_DIR": str(tmp_path / "data")}
    if source == ".env":
        (tmp_path / ".env").write_text(f"REPUTE_OTLP_IDENTITY_ATTRIBUTES='{written}'\n")
    else:
        env["REPUTE_OTLP_IDENTITY_ATTRIBUTES"] = written
    done = subprocess.run(
        [sys.executable, "-m", "service", *command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"error: REPUTE_OTLP_IDENTITY_ATTRIBUTES: expected {LIST_FORM}; got {written!r}"
    ]
    assert not (tmp_path / "data").exists()


def _log_request(session_id: str) -> bytes:
    record = {
        "timeUnixNano": "1763700000000000000",
        "eventName": "claude_code.user_prompt",
        "attributes": [_text("session.id", session_id), _text("user.email", EMAIL), _text("customer.secret", SECRET)],
    }
    resource = {"attributes": [_text("team.agent", AGENT), _text("customer.secret", SECRET)]}
    return orjson.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [record]}]}]})


def _trace_request(trace_id: str) -> bytes:
    span = {
        "traceId": trace_id, "spanId": "00000000000000a1", "name": "invoke_agent",
        "startTimeUnixNano": "1763700000000000000", "endTimeUnixNano": "1763700001000000000",
        "attributes": [_text("gen_ai.operation.name", "invoke_agent"), _text("user.email", EMAIL)],
        "events": [{"name": "checkout", "timeUnixNano": "1763700000500000000",
                    "attributes": [_text("customer.secret", SECRET)]}],
    }  # fmt: skip
    resource = {"attributes": [_text("service.name", "shop"), _text("customer.secret", SECRET)]}
    return orjson.dumps({"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [span]}]}]})


def _text(key: str, value: str) -> dict[str, object]:
    return {"key": key, "value": {"stringValue": value}}


# Read in a process of its own once the server has stopped: the embedded store allows one process.
READ_STORE = """
import json, sys
from pathlib import Path
from service.settings import Settings
from service.store import sessions, traces
from service.store.client import Store
store = Store(Settings(data_dir=Path(sys.argv[1])))
records = [json.loads(payload) for payload in sessions.load_payloads(store, sys.argv[2], sys.argv[3])]
spans = [json.loads(payload) for payload in traces.load_payloads(store, sys.argv[2], [sys.argv[4]])]
print(json.dumps({"records": records, "spans": spans}))
"""


def _stored(data_dir: Path, session_id: str, trace_id: str) -> dict:
    read = [sys.executable, "-c", READ_STORE, str(data_dir), DEFAULT_TENANT, session_id, trace_id]
    done = subprocess.run(read, env=_without_settings(), capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


# Each setting from each source in each form, over two servers: redaction from the environment in the
# comma form (spaces around the names) and from `.env` as JSON; the identity attributes the other way round.
SERVERS = {
    "redaction from the environment, commas": (
        {"redact_attributes": " user.email , customer.secret "},
        'REPUTE_OTLP_IDENTITY_ATTRIBUTES=\'["team.agent", "service.name"]\'\n',
    ),
    "redaction from .env, JSON": (
        {"otlp_identity_attributes": "team.agent, service.name"},
        'REPUTE_REDACT_ATTRIBUTES=\'["user.email", "customer.secret"]\'\n',
    ),
}


@pytest.mark.parametrize("environment, dotenv", SERVERS.values(), ids=SERVERS.keys())
def test_the_server_redacts_the_listed_attributes_everywhere(
    environment: dict[str, str], dotenv: str, tmp_path: Path
) -> None:
    """Record, resource and span-event attributes are stored as pseudonyms. Fails if either form or either
    source is misread: `customer.secret` would be stored as sent (the default list names `user.email` only),
    or the session would not take its identity from `team.agent` (which the default list does not name)."""
    data_dir, port = tmp_path / "data", free_port()
    (tmp_path / ".env").write_text(dotenv)
    server = start_server_process(data_dir, port, cwd=tmp_path, **environment)
    session_id, trace_id = f"s-{uuid.uuid4().hex}", uuid.uuid4().hex
    try:
        key = (data_dir / ADMIN_KEY_FILE).read_text().strip()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {key}"}) as api:
            assert api.post("/v1/logs", content=_log_request(session_id), headers=JSON_HEADERS).status_code == 200
            assert api.post("/v1/traces", content=_trace_request(trace_id), headers=JSON_HEADERS).status_code == 200
            assert api.get(f"/v1/runs/{session_id}").json()["identity"] == AGENT
    finally:
        server.terminate()
        server.wait(timeout=60)
    stored = _stored(data_dir, session_id, trace_id)
    email, secret = pseudonym(DEFAULT_TENANT, EMAIL), pseudonym(DEFAULT_TENANT, SECRET)
    [record], [span] = stored["records"], stored["spans"]
    assert record["attributes"]["user.email"] == email and record["attributes"]["customer.secret"] == secret
    assert record["resource_attributes"] == {"team.agent": AGENT, "customer.secret": secret}
    assert span["attributes"]["user.email"] == email
    assert span["resource_attributes"] == {"service.name": "shop", "customer.secret": secret}
    assert span["events"][0]["attributes"] == {"customer.secret": secret}
    assert EMAIL not in json.dumps(stored) and SECRET not in json.dumps(stored)
