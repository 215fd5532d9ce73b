"""A small OpenAI-compatible model server on 127.0.0.1 that follows a script: POST .../chat/completions
answers each agent's next turn (the agent is told by the `[agent:<name>]` marker in its instructions) with
the scripted tool calls or text, and token usage that differs on every call (so a total counted twice
shows). Streaming requests get the same answer as server-sent events, usage in the last chunk.
Everything it served is kept in `served` (what the recordings are checked against)."""

import json
import re
import threading
from collections import defaultdict
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_AGENT = re.compile(r"\[agent:([a-z_]+)\]")
MODEL = "fake-gpt-4o"
CREATED = 1_790_000_000


class FakeModel:
    def __init__(self, turns: dict[str, list[tuple[str, Any]]]) -> None:
        self.turns = turns
        self.served: list[dict[str, Any]] = []
        self._next: defaultdict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = str(self._server.server_address[0]), self._server.server_address[1]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeModel":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The next turn of the agent the request's instructions name, as a chat completion."""
        agent = _agent_of(request)
        with self._lock:
            turn_index = self._next[agent]
            self._next[agent] += 1
            call = len(self.served)
            kind, content = self.turns[agent][min(turn_index, len(self.turns[agent]) - 1)]
            usage = {"prompt_tokens": 200 + 37 * call, "completion_tokens": 11 + 3 * call}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            message: dict[str, Any] = {"role": "assistant", "content": None}
            if kind == "tools":
                message["tool_calls"] = [
                    {
                        "id": f"call_{agent}_{turn_index}_{position}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                    for position, (name, arguments) in enumerate(content)
                ]
            else:
                message["content"] = content
            self.served.append({"agent": agent, "turn": turn_index, "kind": kind, "content": content, "usage": usage})
        return {
            "id": f"chatcmpl-{call}",
            "object": "chat.completion",
            "created": CREATED + call,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if kind == "tools" else "stop"}],
            "usage": usage,
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                if not self.path.rstrip("/").endswith("chat/completions"):
                    self.send_error(404, f"the fake model answers chat completions only, not {self.path}")
                    return
                completion = model.answer(body)
                if body.get("stream"):
                    self._stream(completion)
                else:
                    self._send(json.dumps(completion).encode(), "application/json")

            def _send(self, data: bytes, content_type: str) -> None:
                self.send_response(200)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, completion: dict[str, Any]) -> None:
                data = b"".join(f"data: {json.dumps(chunk)}\n\n".encode() for chunk in _chunks(completion))
                self._send(data + b"data: [DONE]\n\n", "text/event-stream")

        return Handler


def _agent_of(request: dict[str, Any]) -> str:
    for message in request.get("messages") or ():
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        found = _AGENT.search(text or "")
        if found:
            return found.group(1)
    raise ValueError("the request names no agent ([agent:<name>] in its instructions)")


def _chunks(completion: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A completion as stream chunks: the message as one delta, then the finish reason, then the usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if "tool_calls" in message:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    common = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    yield {**common, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**common, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}
    yield {**common, "choices": [], "usage": completion["usage"]}
