/**
 * Attribute, span and metric names. The `gen_ai.*` ones follow the OpenTelemetry
 * GenAI semantic conventions (kept here as constants rather than depending on
 * the semantic-conventions package, whose GenAI names are still experimental
 * and move between releases); the `governor.*` ones are ours.
 */

// GenAI attributes
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
export const ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = 'gen_ai.request.max_tokens';
export const ATTR_GEN_AI_REQUEST_TEMPERATURE = 'gen_ai.request.temperature';
export const ATTR_GEN_AI_REQUEST_TOP_P = 'gen_ai.request.top_p';
export const ATTR_GEN_AI_REQUEST_TOP_K = 'gen_ai.request.top_k';
export const ATTR_GEN_AI_REQUEST_STOP_SEQUENCES = 'gen_ai.request.stop_sequences';
export const ATTR_GEN_AI_REQUEST_SEED = 'gen_ai.request.seed';
export const ATTR_GEN_AI_REQUEST_FREQUENCY_PENALTY = 'gen_ai.request.frequency_penalty';
export const ATTR_GEN_AI_REQUEST_PRESENCE_PENALTY = 'gen_ai.request.presence_penalty';
export const ATTR_GEN_AI_OUTPUT_TYPE = 'gen_ai.output.type';
export const ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const ATTR_GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const ATTR_GEN_AI_TOKEN_TYPE = 'gen_ai.token.type';
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
export const ATTR_GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';
export const ATTR_GEN_AI_TOOL_DESCRIPTION = 'gen_ai.tool.description';
/** Opt-in content (see `TelemetryOptions.recordContent`). */
export const ATTR_GEN_AI_SYSTEM_INSTRUCTIONS = 'gen_ai.system_instructions';
export const ATTR_GEN_AI_INPUT_MESSAGES = 'gen_ai.input.messages';
export const ATTR_GEN_AI_OUTPUT_MESSAGES = 'gen_ai.output.messages';
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const ATTR_GEN_AI_TOOL_CALL_RESULT = 'gen_ai.tool.call.result';
export const ATTR_ERROR_TYPE = 'error.type';

// GenAI operation names
export const GEN_AI_OPERATION_CHAT = 'chat';
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';
export const GEN_AI_OPERATION_INVOKE_AGENT = 'invoke_agent';

// Governor attributes
export const ATTR_ADVISOR_NAME = 'governor.advisor.name';
export const ATTR_ADVISOR_ORDER = 'governor.advisor.order';
export const ATTR_CHAT_CLIENT_STREAM = 'governor.chat_client.stream';
export const ATTR_CHAT_CLIENT_ADVISORS = 'governor.chat_client.advisors';
export const ATTR_CHAT_CLIENT_ROUNDS = 'governor.chat_client.rounds';
/** Usage summed over a whole call or run: kept apart from `gen_ai.usage.*` so backends that sum model spans do not count it twice. */
export const ATTR_USAGE_TOTAL_INPUT_TOKENS = 'governor.usage.total_input_tokens';
export const ATTR_USAGE_TOTAL_OUTPUT_TOKENS = 'governor.usage.total_output_tokens';
export const ATTR_USAGE_TOTAL_CACHED_INPUT_TOKENS = 'governor.usage.total_cached_input_tokens';
export const ATTR_COST_USD = 'governor.cost.usd';
export const ATTR_TOOL_OUTCOME = 'governor.tool.outcome';
export const ATTR_TOOL_INTERVENTION = 'governor.tool.intervention';
export const ATTR_AGENT_LOOP_STATUS = 'governor.agent_loop.status';
export const ATTR_AGENT_LOOP_INVOCATIONS = 'governor.agent_loop.invocations';
export const ATTR_AGENT_LOOP_TURNS = 'governor.agent_loop.turns';
export const ATTR_AGENT_LOOP_TOOL_CALLS = 'governor.agent_loop.tool_calls';
export const ATTR_AGENT_LOOP_REASON = 'governor.agent_loop.reason';
/** Labels of `governor.breaker.escalations` (kept short and unprefixed since the counter's first release). */
export const ATTR_BREAKER_CATEGORY_LABEL = 'category';
export const ATTR_BREAKER_ACTION_LABEL = 'action';

// Metric names
export const METRIC_GEN_AI_TOKEN_USAGE = 'gen_ai.client.token.usage';
export const METRIC_GEN_AI_OPERATION_DURATION = 'gen_ai.client.operation.duration';
export const METRIC_CACHED_INPUT_TOKENS = 'governor.token.cached_input';
export const METRIC_TOOL_CALLS = 'governor.tool.calls';
export const METRIC_TOOL_DURATION = 'governor.tool.duration';
export const METRIC_BREAKER_ESCALATIONS = 'governor.breaker.escalations';
/** Counter: breaker operations let through (fail-open) or refused (fail-closed) unjudged because the store failed. */
export const METRIC_BREAKER_UNJUDGED = 'governor.breaker.unjudged';
export const METRIC_BREAKER_OPEN = 'governor.breaker.open';
export const METRIC_AGENT_LOOP_ENDS = 'governor.agent_loop.ends';
export const METRIC_COST = 'governor.cost';

/** Stands for a value that would otherwise make a metric label unbounded (a tool name the model made up). */
export const OTHER_VALUE = '_OTHER';
