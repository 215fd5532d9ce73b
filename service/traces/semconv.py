"""The attribute names and values a trace is read by (SPEC §3.4): the OpenTelemetry GenAI semantic
conventions, OpenInference (Arize Phoenix) and OpenLLMetry (Traceloop), plus Repute's own `repute.*`
attributes for harness context. Other spellings are ignored."""

OPERATION_NAME = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"
TRACELOOP_KIND = "traceloop.span.kind"
LLM_REQUEST_TYPE = "llm.request.type"

# Span roles: (GenAI operation names, OpenInference kind, OpenLLMetry kind).
TOOL_ROLE = (frozenset({"execute_tool"}), "TOOL", "tool")
AGENT_ROLE = (frozenset({"invoke_agent", "create_agent"}), "AGENT", "agent")
LLM_ROLE = (frozenset({"chat", "text_completion", "generate_content", "call_llm"}), "LLM", None)

# A handoff (SPEC §3.4): an OpenInference TOOL span with this name prefix (OpenAI Agents SDK), or this
# OpenLLMetry kind. It maps to nothing: the receiving agent's state_transition is the handoff.
HANDOFF_PREFIX = "handoff to "
TRACELOOP_HANDOFF = "handoff"
TOOL_NAME = "gen_ai.tool.name"  # alone, without an operation name, a tool span (Koog, Pydantic AI 1.x)
AGENT_RUN_NAME = "agent_name"  # alone, without an operation name, an agent span (Pydantic AI 1.x)
SMOLAGENTS_RUN_SUFFIX = ".run"  # an OpenInference AGENT span named `<agent>.run` (smolagents)

CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_ID = "gen_ai.agent.id"
AGENT_NAME = "gen_ai.agent.name"
# An agent span's name, the first present (SPEC §3.5).
AGENT_NAMES = (AGENT_ID, AGENT_NAME, "agent.name", AGENT_RUN_NAME, "graph.node.id")
SERVICE_NAME = "service.name"
DEFAULT_SERVICE = "unknown_service"  # the SDK's service.name when none was set

TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
# Where a tool span's call arguments are, first match that is a JSON object. OpenInference's
# `tool.parameters` is left out: it holds the tool's JSON schema, the same for every call, so reading
# it as the arguments would make every call of a tool look like a repeat of the last.
TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.args",
    "tool_arguments",
    "gcp.vertex.agent.tool_call_args",
    "input.value",
    "traceloop.entity.input",
)
TOOL_CALL_ID = "gen_ai.tool.call.id"
# Strands puts a call's arguments only in its span event `gen_ai.tool.message` (role tool, `content`).
TOOL_MESSAGE_EVENT = "gen_ai.tool.message"
# OpenLLMetry's `traceloop.entity.input` and smolagents' `input.value` wrap a call's arguments: read as
# the `kwargs`, so f(x=1) looks the same under every instrumentation.
ARGUMENT_WRAPPER_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})

# Token usage families, the first present wins: (input, output, total when the pair is absent).
USAGE_FAMILIES = (
    ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", None),
    ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens", None),
    ("llm.usage.prompt_tokens", "llm.usage.completion_tokens", "llm.usage.total_tokens"),
    ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"),
)
RESPONSE_MODEL = "gen_ai.response.model"
REQUEST_MODEL = "gen_ai.request.model"
MODEL_NAMES = (RESPONSE_MODEL, REQUEST_MODEL, "llm.model_name")
PROVIDER_NAMES = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
FINISH_REASONS = "gen_ai.response.finish_reasons"

ERROR_TYPE = "error.type"
HTTP_STATUS_CODES = ("http.response.status_code", "http.status_code")
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"

STAGE = "repute.stage"
SUITE = "repute.suite"
TASK_ID = "repute.task_id"
TRIAL = "repute.trial"
