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

CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_ID = "gen_ai.agent.id"
AGENT_NAME = "gen_ai.agent.name"
SERVICE_NAME = "service.name"
DEFAULT_SERVICE = "unknown_service"  # the SDK's service.name when none was set

TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
# Where a tool span's call arguments are, first match that is a JSON object. OpenInference's
# `tool.parameters` is left out: it holds the tool's JSON schema, the same for every call, so reading
# it as the arguments would make every call of a tool look like a repeat of the last.
TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.args",
    "gcp.vertex.agent.tool_call_args",
    "input.value",
    "traceloop.entity.input",
)
TOOL_CALL_ID = "gen_ai.tool.call.id"

# Token usage families, the first present wins: (input, output, total when the pair is absent).
USAGE_FAMILIES = (
    ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", None),
    ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens", None),
    ("llm.usage.prompt_tokens", "llm.usage.completion_tokens", "llm.usage.total_tokens"),
    ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total"),
)
RESPONSE_MODEL = "gen_ai.response.model"
REQUEST_MODEL = "gen_ai.request.model"
PROVIDER_NAMES = ("gen_ai.provider.name", "gen_ai.system")
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
