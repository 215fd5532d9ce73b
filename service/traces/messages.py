"""The model's input and output messages of one span, where its trace carries them (issue #41: the run
page's span timeline). Instrumentations record them in one of four ways, read in this order:

- the GenAI conventions (1.37): `gen_ai.input.messages` / `gen_ai.output.messages`, a JSON list of
  `{role, parts: [{type, content | name, arguments | response}]}`, and `gen_ai.system_instructions`;
- OpenLLMetry's and older GenAI attributes: `gen_ai.prompt.<i>.role|content`, `gen_ai.completion.<i>...`;
- OpenInference: `llm.input_messages.<i>.message.role|content` (or its `contents.<j>.message_content.text`,
  its `tool_calls.<j>.tool_call.function.name|arguments`), `llm.output_messages.<i>...`;
- span events of the older GenAI conventions (Strands, Google ADK): `gen_ai.system.message`,
  `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message` in, `gen_ai.choice` out;
- else a span's `input.value` / `output.value` (OpenInference) or `traceloop.entity.input|output`, as one
  message each.

Each message is `{role, content}`, its content as text (a tool call reads `name(arguments)`), cut to
MAX_MESSAGE_CHARS; a side keeps at most MAX_MESSAGES (the input its last ones: the newest turns). The
attributes are read as stored, so what the receiver redacted stays redacted. Pure: no I/O.
"""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from service.otlp.attributes import Attributes, AttributeValue
from service.traces.spans import Span

MAX_MESSAGE_CHARS = 4000
MAX_MESSAGES = 20
CUT = "…"

INPUT_MESSAGES, OUTPUT_MESSAGES = "gen_ai.input.messages", "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
_INDEXED = re.compile(r"^(gen_ai\.prompt|gen_ai\.completion|llm\.input_messages|llm\.output_messages)\.(\d+)\.(.+)$")
_INPUT_PREFIXES = ("gen_ai.prompt", "llm.input_messages")
EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
CHOICE_EVENT = "gen_ai.choice"
RAW_VALUES = (("input.value", "output.value"), ("traceloop.entity.input", "traceloop.entity.output"))


@dataclass(frozen=True)
class Message:
    role: str
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Messages:
    input: list[Message]
    output: list[Message]
    truncated: bool  # a message was cut, or a side had more than MAX_MESSAGES

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": [message.to_dict() for message in self.input],
            "output": [message.to_dict() for message in self.output],
            "truncated": self.truncated,
        }


def span_messages(span: Span) -> Messages | None:
    """The span's input and output messages by the first way (above) that gives any; None when none does."""
    for read in (_conventions, _indexed, _events, _raw_values):
        sides = read(span)
        if sides[0] or sides[1]:
            return _bounded(*sides)
    return None


def _bounded(inputs: list[Message], outputs: list[Message]) -> Messages:
    kept_in, kept_out = inputs[-MAX_MESSAGES:], outputs[:MAX_MESSAGES]
    cut = [_cut(message) for message in (*kept_in, *kept_out)]
    truncated = len(kept_in) < len(inputs) or len(kept_out) < len(outputs) or any(changed for _, changed in cut)
    messages = [message for message, _ in cut]
    return Messages(messages[: len(kept_in)], messages[len(kept_in) :], truncated)


def _cut(message: Message) -> tuple[Message, bool]:
    if len(message.content) <= MAX_MESSAGE_CHARS:
        return message, False
    return Message(message.role, message.content[: MAX_MESSAGE_CHARS - len(CUT)] + CUT), True


# --- the GenAI conventions' JSON lists ------------------------------------------------------------------


def _conventions(span: Span) -> tuple[list[Message], list[Message]]:
    attributes = span.attributes
    system = [Message("system", text) for text in _parts_text(_json(attributes.get(SYSTEM_INSTRUCTIONS)))]
    inputs = list(_convention_messages(attributes.get(INPUT_MESSAGES), "input"))
    if system and not any(message.role == "system" for message in inputs):
        inputs = [*system, *inputs]
    return inputs, list(_convention_messages(attributes.get(OUTPUT_MESSAGES), "output"))


def _convention_messages(value: AttributeValue, side: str) -> Iterator[Message]:
    """The messages of a list; text that is no JSON list (a redacted value: its pseudonym) as one message."""
    document = _json(value)
    if isinstance(document, str) and document:
        yield Message(side, document)
    for item in _as_list(document):
        if isinstance(item, dict):
            text = "\n".join(_parts_text(item.get("parts")))
            yield Message(_text(item.get("role")) or "?", text or _text(item.get("content")) or "")


def _parts_text(parts: Any) -> Iterator[str]:
    for part in _as_list(parts):
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "tool_call":
            yield _call(part.get("name"), part.get("arguments"))
        elif kind == "tool_call_response":
            yield f"result: {_text(part.get('response')) or _text(part.get('result')) or ''}"
        elif (text := _text(part.get("content"))) is not None:
            yield text


# --- flattened attributes: gen_ai.prompt.<i>.*, llm.input_messages.<i>.message.* -----------------------


def _indexed(span: Span) -> tuple[list[Message], list[Message]]:
    """Messages spelled out in flat attributes, one prefix per side and message index."""
    found: dict[tuple[bool, int], dict[str, AttributeValue]] = {}
    for name, value in span.attributes.items():
        match = _INDEXED.match(name)
        if match is not None:
            prefix, index, rest = match.groups()
            found.setdefault((prefix in _INPUT_PREFIXES, int(index)), {})[rest.removeprefix("message.")] = value
    sides: tuple[list[Message], list[Message]] = ([], [])
    for (is_input, _), fields in sorted(found.items(), key=lambda item: (not item[0][0], item[0][1])):
        sides[0 if is_input else 1].append(Message(_text(fields.get("role")) or "?", _indexed_content(fields)))
    return sides


def _indexed_content(fields: dict[str, AttributeValue]) -> str:
    content = _text(fields.get("content"))
    texts = [_text(value) for name, value in sorted(fields.items()) if name.endswith("message_content.text")]
    names = sorted({name.split(".tool_call.")[0] for name in fields if ".tool_call." in name})
    calls = [
        _call(fields.get(f"{prefix}.tool_call.function.name"), fields.get(f"{prefix}.tool_call.function.arguments"))
        for prefix in names
    ]
    return "\n".join(text for text in (content, *texts, *calls) if text)


# --- span events ----------------------------------------------------------------------------------------


def _events(span: Span) -> tuple[list[Message], list[Message]]:
    inputs, outputs = [], []
    for event in span.events:
        if event.name in EVENT_ROLES:
            inputs.append(Message(EVENT_ROLES[event.name], _event_text(event.attributes, "content")))
        elif event.name == CHOICE_EVENT:
            outputs.append(Message("assistant", _event_text(event.attributes, "message")))
    return inputs, outputs


def _event_text(attributes: Attributes, name: str) -> str:
    """An event's content (Strands: a JSON list of `{text}` or `{toolUse}` blocks), as text."""
    value = attributes.get(name, attributes.get("content"))
    blocks = _json(value)
    if not isinstance(blocks, list):
        return _text(value) or ""
    return "\n".join(_block_text(block) for block in blocks)


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and isinstance(block.get("toolUse"), dict):
        return _call(block["toolUse"].get("name"), block["toolUse"].get("input"))
    if isinstance(block, dict) and "text" in block:
        return _text(block["text"]) or ""
    return _text(block) or ""


# --- raw values -------------------------------------------------------------------------------------------


def _raw_values(span: Span) -> tuple[list[Message], list[Message]]:
    for input_name, output_name in RAW_VALUES:
        given_in, given_out = _text(span.attributes.get(input_name)), _text(span.attributes.get(output_name))
        if given_in or given_out:
            return [Message("input", given_in)] if given_in else [], [Message("output", given_out)] if given_out else []
    return [], []


# --- values ---------------------------------------------------------------------------------------------


def _json(value: Any) -> Any:
    """A JSON document given as text (how most exporters carry structured values), else the value."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _as_list(value: Any) -> Iterable[Any]:
    return value if isinstance(value, list) else ()


def _text(value: Any) -> str | None:
    """Text as text; any other value as compact JSON; None for null."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str).decode()


def _call(name: Any, arguments: Any) -> str:
    """A tool call as `name(arguments)`."""
    return f"{_text(name) or '?'}({_text(_json(arguments)) or ''})"
