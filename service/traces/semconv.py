"""The attribute names and values a trace is read by: the OpenTelemetry GenAI semantic conventions,
plus Repute's own `repute.*` attributes for harness context (SPEC §3.4). Other spellings are ignored."""

OPERATION_NAME = "gen_ai.operation.name"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_ID = "gen_ai.agent.id"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")  # current name first
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
ERROR_TYPE = "error.type"
SERVICE_NAME = "service.name"

EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"

EXECUTE_TOOL = "execute_tool"
MODEL_CALLS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATIONS = frozenset({"invoke_agent", "create_agent"})

STAGE = "repute.stage"
SUITE = "repute.suite"
TASK_ID = "repute.task_id"
TRIAL = "repute.trial"
