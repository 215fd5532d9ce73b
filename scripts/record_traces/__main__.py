"""Records tests/data/recorded/: `python -m scripts.record_traces [NAME ...]` (in the venv of the
`record` extra, scripts/record_traces/README.md). Each recording runs in a process of its own; their
library versions and what the fake model served go to recordings.json, read by SOURCES.md's table."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

RECORDINGS = (
    "openai_agents_openinference",
    "openai_agents_openllmetry",
    "openai_agents_genai",
    "traceloop_sdk",
    "pydantic_ai",
    "pydantic_ai_format2",
    "smolagents_openinference",
    "strands",
    "langgraph_openinference",
    "agno_openinference",
)
NOT_INSTALLED = 3  # recording.py's exit status when a library is missing
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "data" / "recorded"


def main(names: list[str]) -> int:
    manifest_path = OUT / "recordings.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    failed = []
    for name in names or RECORDINGS:
        done = subprocess.run(
            [sys.executable, "-m", "scripts.record_traces.recording", name, str(OUT)],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode == NOT_INSTALLED:
            print(f"{name}: its libraries are not installed in this venv; left as recorded")
            continue
        if done.returncode:
            failed.append(name)
            print(f"{name}: failed\n{done.stderr[-4000:]}", file=sys.stderr)
            continue
        manifest[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name}: {manifest[name]['spans']} spans, {len(manifest[name]['served'])} model calls")
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    (OUT / "SOURCES.md").write_text(sources(manifest))
    return 1 if failed else 0


def sources(manifest: dict[str, Any]) -> str:
    """SOURCES.md: how the files were made, and each file's libraries with their versions and licences."""
    rows = [
        f"| `{name}.json` | {entry['title']} | "
        + ", ".join(f"{library} {info['version']} ({info['licence']})" for library, info in entry["libraries"].items())
        + f" | {entry['spans']} | {len(entry['served'])} |"
        for name, entry in manifest.items()
    ]
    return SOURCES_HEAD + "\n".join(rows) + "\n"


SOURCES_HEAD = """# Recorded instrumentations (issue #40)

Made here, by `scripts/record_traces` (its README says how to run it again): each file is one run of the
same application, a `triage` agent handing a refund over to a `billing` agent (a handoff, or a delegation
where the framework has none), billing calling `lookup_order` (succeeds), `check_policy` (its policy
service times out; the tool catches that and records the exception on the current span: a handled
exception) and `issue_refund` (raises: a failing call), on a real agent framework traced by a real,
unmodified instrumentation. The model is a scripted OpenAI-compatible server on 127.0.0.1
(`scripts/record_traces/fake_model.py`): it answers each agent's turns with the scripted tool calls and
arguments, and token usage that differs on every call (200 + 37·n prompt and 11 + 3·n completion tokens
for the n-th call of the run), so a total counted twice shows. `recordings.json` keeps every answer it
served, and the versions and licences below (read from the installed distributions' metadata).

Each file is the OpenTelemetry SDK's finished spans, as written: a JSON list of `ReadableSpan.to_json()`
objects (`0x` hex ids, ISO 8601 times, resource `service.name` = `support-desk`). Nothing was edited
after the recording. The libraries' licences are those of the libraries; the files are this project's.

| file | what | libraries (version, licence) | spans | model calls |
| --- | --- | --- | --- | --- |
"""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
