"""A small reader of the recorded instrumentations (tests/data/recorded), written for the tests from the
SPEC's words (§3.4 span roles, arguments, usage, errors; §3.5 agents and child runs) and from nothing of
the service: each file's JSON read with `json`, every question answered by walking the parent links
afresh (quadratic, and plain on purpose). What it says a file shows is what the service must give."""

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "data" / "recorded"
MANIFEST: dict[str, Any] = json.loads((RECORDED / "recordings.json").read_text())
FILES = sorted(f"{name}.json" for name in MANIFEST)
APP_TOOLS = ("lookup_order", "check_policy", "issue_refund")

_USAGE = (
    ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", None),
    ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens", None),
    ("llm.usage.prompt_tokens", "llm.usage.completion_tokens", "llm.usage.total_tokens"),
    ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"),
)
_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.args",
    "tool_arguments",
    "gcp.vertex.agent.tool_call_args",
    "input.value",
    "traceloop.entity.input",
)
_AGENT_NAMES = ("gen_ai.agent.id", "gen_ai.agent.name", "agent.name", "agent_name", "graph.node.id")


@dataclass
class RecordedSpan:
    span_id: str
    parent_id: str | None
    name: str
    start: str  # ISO 8601 as written: the same width in every file, so it sorts as text
    end: str
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    error: bool
    service: str

    @property
    def operation(self) -> Any:
        return self.attributes.get("gen_ai.operation.name")

    @property
    def kinds(self) -> tuple[Any, Any]:
        return self.attributes.get("openinference.span.kind"), self.attributes.get("traceloop.span.kind")


def read_spans(name: str) -> list[RecordedSpan]:
    """A recorded file's spans, in run order (start, end, span id)."""
    spans = [
        RecordedSpan(
            span_id=item["context"]["span_id"].removeprefix("0x"),
            parent_id=(item.get("parent_id") or "").removeprefix("0x") or None,
            name=item["name"],
            start=item["start_time"],
            end=item["end_time"],
            attributes=item["attributes"],
            events=item["events"],
            error=item["status"]["status_code"] == "ERROR",
            service=item["resource"]["attributes"].get("service.name", ""),
        )
        for item in json.loads((RECORDED / name).read_text())
    ]
    return sorted(spans, key=lambda span: (span.start, span.end, span.span_id))


def iso_nanos(text: str) -> int:
    """Unix nanoseconds of the SDK's ISO 8601 time (`...T05:33:20.650205Z`)."""
    whole, _, fraction = text.removesuffix("Z").partition(".")
    seconds = int(datetime.fromisoformat(whole).replace(tzinfo=UTC).timestamp())
    return seconds * 1_000_000_000 + int(fraction.ljust(9, "0"))


def role(span: RecordedSpan) -> str | None:
    openinference, traceloop = span.kinds
    attributes = span.attributes
    if (openinference == "TOOL" and span.name.startswith("handoff to ")) or traceloop == "handoff":
        return "handoff"
    if span.operation == "execute_tool" or openinference == "TOOL" or traceloop == "tool":
        return "tool"
    if span.operation is None and "gen_ai.tool.name" in attributes:
        return "tool"
    if span.operation in ("invoke_agent", "create_agent") or openinference == "AGENT" or traceloop == "agent":
        return "agent"
    if span.operation is None and "agent_name" in attributes:
        return "agent"
    if span.operation in ("chat", "text_completion", "generate_content", "call_llm") or openinference == "LLM":
        return "llm"
    if "llm.request.type" in attributes or usage(span) is not None:
        return "llm"
    return None


def usage(span: RecordedSpan) -> tuple[int | None, int | None, int] | None:
    """(input, output, total) of the first usage family the span carries."""
    attributes = span.attributes
    for input_name, output_name, total_name in _USAGE:
        if input_name in attributes or output_name in attributes:
            tokens_in, tokens_out = int(attributes.get(input_name, 0)), int(attributes.get(output_name, 0))
            return tokens_in, tokens_out, tokens_in + tokens_out
        if total_name in attributes:
            return None, None, int(attributes[total_name])
    return None


def agent_name(span: RecordedSpan) -> str | None:
    for name in _AGENT_NAMES:
        if span.attributes.get(name):
            return str(span.attributes[name])
    if span.kinds[0] == "AGENT" and span.name.endswith(".run"):
        return span.name.removesuffix(".run")
    return None


def valid_identity(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._:@/+-]+", "-", text)[:256]


def arguments(span: RecordedSpan) -> dict[str, Any]:
    candidates = [span.attributes.get(name) for name in _ARGUMENTS]
    candidates += [e["attributes"].get("content") for e in span.events if e["name"] == "gen_ai.tool.message"
                   and e["attributes"].get("role") == "tool"]  # fmt: skip
    for candidate in candidates:
        try:
            value = json.loads(candidate) if isinstance(candidate, str) else None
        except ValueError:
            continue
        wrapper = isinstance(value, dict) and value.get("args") == [] and isinstance(value.get("kwargs"), dict)
        if wrapper and set(value) <= {"args", "kwargs", "sanitize_inputs_outputs"}:  # type: ignore[arg-type]
            return value["kwargs"]  # type: ignore[index]
        if isinstance(value, dict):
            return value
    return {"span": span.span_id}


@dataclass
class ExpectedRun:
    identity: str
    events: list[tuple[Any, ...]] = field(default_factory=list)


class RecordedTrace:
    """What one recorded file shows under the SPEC: its runs (the root agent's first, then one per other
    agent, by first span), each with its events as `event_key` tuples."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spans = read_spans(name)
        self.trace_id = json.loads((RECORDED / name).read_text())[0]["context"]["trace_id"].removeprefix("0x")
        self.by_id = {span.span_id: span for span in self.spans}
        self.root_identity = self._root_identity()
        self.runs: dict[str, ExpectedRun] = {self.root_identity: ExpectedRun(self.root_identity)}
        for span in self.spans:
            self._map(span)

    def ancestors(self, span: RecordedSpan) -> list[RecordedSpan]:
        found = []
        while span.parent_id in self.by_id:
            span = self.by_id[span.parent_id]
            found.append(span)
        return found

    def owner(self, span: RecordedSpan) -> str:
        for candidate in [span, *self.ancestors(span)]:
            if role(candidate) == "agent" and agent_name(candidate):
                return valid_identity(str(agent_name(candidate)))
        return self.root_identity

    def _root_identity(self) -> str:
        root = next((span for span in self.spans if span.parent_id is None), self.spans[0])
        agents = [span for span in self.spans if role(span) == "agent" and agent_name(span)]
        name = agent_name(root) or (agent_name(agents[0]) if agents else None) or root.service
        return valid_identity(name)

    def counted(self, span: RecordedSpan) -> bool:
        """Usage counts on a span carrying it with no descendant in the trace that carries usage."""
        return usage(span) is not None and not any(
            usage(other) is not None and span in self.ancestors(other) for other in self.spans
        )

    def _map(self, span: RecordedSpan) -> None:
        owner = self.owner(span)
        events = self.runs.setdefault(owner, ExpectedRun(owner)).events
        kind = role(span)
        if kind == "tool":
            tool = next(
                (str(span.attributes[n]) for n in ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
                 if span.attributes.get(n)), span.name,
            )  # fmt: skip
            events.append(("tool_call", span.span_id, tool, json.dumps(arguments(span), sort_keys=True)))
            events.append(("tool_output", span.span_id, tool, "error" if span.error else "ok"))
        if kind == "agent" and agent_name(span):
            events.append(("state_transition", span.span_id, owner))
            handed_by = self.owner(self.by_id[span.parent_id]) if span.parent_id in self.by_id else self.root_identity
            if handed_by != owner:
                self.runs.setdefault(handed_by, ExpectedRun(handed_by)).events.append(
                    ("state_transition", span.span_id, owner)
                )
        if self.counted(span):
            tokens_in, tokens_out, total = usage(span)  # type: ignore[misc]
            events.append(("token_usage", span.span_id, total, tokens_in, tokens_out, model(span)))
        elif (
            kind == "llm"
            and usage(span) is None
            and not any(role(other) == "llm" and span in self.ancestors(other) for other in self.spans)
        ):
            events.append(("token_usage", span.span_id, 0, None, None, model(span)))
        if span.error:
            events.append(("error_event", span.span_id))

    def run_ids(self) -> dict[str, str]:
        """Each identity's run id: the root agent's is the conversation id (the root span's, else the
        earliest span's naming one) else the trace id; every other agent's `<run id>:<identity>`."""
        conversations = [
            s.attributes["gen_ai.conversation.id"] for s in self.spans if "gen_ai.conversation.id" in s.attributes
        ]
        roots = [s.attributes.get("gen_ai.conversation.id") for s in self.spans if s.parent_id is None]
        run_id = next(filter(None, roots), None) or (conversations[0] if conversations else self.trace_id)
        return {
            identity: run_id if identity == self.root_identity else f"{run_id}:{identity}" for identity in self.runs
        }

    def error_spans(self) -> list[str]:
        return [span.span_id for span in self.spans if span.error]

    def handled_exception_spans(self) -> list[str]:
        return [s.span_id for s in self.spans if not s.error and any(e["name"] == "exception" for e in s.events)]


def model(span: RecordedSpan) -> str | None:
    for name in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        if span.attributes.get(name):
            return str(span.attributes[name])
    return None


def event_key(event: dict[str, Any]) -> tuple[Any, ...]:
    """A mapped run event as the reader writes its expectations."""
    kind, span_id = event["event"], event["span_id"]
    if kind == "tool_call":
        return kind, span_id, event["tool"], json.dumps(event["args"], sort_keys=True)
    if kind == "tool_output":
        return kind, span_id, event["tool"], event["status"]
    if kind == "state_transition":
        return kind, span_id, event["agent"]
    if kind == "token_usage":
        fields = ("total_tokens", "input_tokens", "output_tokens", "model")
        return (kind, span_id, *(event.get(name) for name in fields))
    if kind == "error_event":
        return kind, span_id
    return kind, span_id


def langfuse_export(name: str) -> dict[str, Any]:
    """A recorded file as Langfuse exports a trace it received over OTLP (`trace` and `observations`, each
    span's attributes and resource under `metadata`, numbers written as text, an ERROR span an observation
    of level ERROR with its status message). Span events are not kept, as Langfuse keeps none."""
    items = json.loads((RECORDED / name).read_text())
    trace_id = items[0]["context"]["trace_id"].removeprefix("0x")
    observations = [
        {
            "id": item["context"]["span_id"].removeprefix("0x"),
            "traceId": trace_id,
            "parentObservationId": (item.get("parent_id") or "").removeprefix("0x") or None,
            "type": "SPAN",
            "name": item["name"],
            "startTime": item["start_time"],
            "endTime": item["end_time"],
            "level": "ERROR" if item["status"]["status_code"] == "ERROR" else "DEFAULT",
            "statusMessage": item["status"].get("description"),
            "metadata": {
                "attributes": {key: _as_langfuse(value) for key, value in item["attributes"].items()},
                "resourceAttributes": item["resource"]["attributes"],
                "scope": {"name": "recorded"},
            },
        }
        for item in items
    ]
    return {"trace": {"id": trace_id, "name": name, "observations": [o["id"] for o in observations]},
            "observations": observations}  # fmt: skip


def _as_langfuse(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
