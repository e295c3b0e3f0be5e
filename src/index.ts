// First: an unsupported Node fails here with one clear line.
import './runtime/assert-supported-node.ts';

// Chat client and advisor chain
export {
  ChatClient,
  ChatClientBuilder,
  ChatClientRequestSpec,
  CallResponseSpec,
  StreamResponseSpec,
  AdvisorSpec,
  InvalidRequestError,
  type ResponseEntity,
} from './chat/chat-client.ts';
export { AdvisorOrder, type Advisor, type AdvisorChain } from './chat/advisor.ts';
export {
  DefaultAdvisorChain,
  AdvisorNotInChainError,
  AdvisorResultError,
  DuplicateAdvisorError,
  sortAdvisors,
  type ModelTerminal,
} from './chat/advisor-chain.ts';
export { CONVERSATION_ID, DEFAULT_CONVERSATION_ID, conversationIdOf, sessionIdOf, type AdvisorContext } from './chat/advisor-context.ts';
export { AdvisorHookResultError, beforeAfterAdvisor, type BeforeAfterHooks } from './chat/before-after-advisor.ts';
export type { ChatClientRequest, GovernedTool, GovernedToolSet, ModelOptions, ResponseFormat } from './chat/chat-client-request.ts';
export type {
  ChatClientResponse,
  ChatResponse,
  ChatStreamEvent,
  FinishReason,
  PendingToolApproval,
  ToolCallRequest,
  ToolCallIntervention,
} from './chat/chat-response.ts';
export { EntityParseError, EntityPendingError, OUTPUT_SCHEMA, type OutputSchema } from './chat/entity.ts';
export type { ChatUIMessageResponseInit, ChatUIMessageStreamOptions } from './chat/ui-message-stream.ts';
export { ModelCallTerminal } from './chat/model-call.ts';
export { ADVISOR_PLACEMENT, AdvisorPlacementError, type AdvisorPlacement, type PlacedAdvisor } from './chat/advisor-placement.ts';
export { MODEL_CALL_LISTENERS, type ModelCallListener, type ModelRetryEvent } from './chat/model-call-listener.ts';
export { DEFAULT_MAX_RETRIES, DEFAULT_RETRY_DELAY_MS, DEFAULT_STALL_TIMEOUT_MS, MAX_RETRY_DELAY_MS, ModelStallError } from './chat/model-retry.ts';
export { CONTINUATION_TURN, CONTINUED_TASK, OBSERVATION_SINKS, reportObservation, type ObservationSink } from './chat/observation.ts';
export { TOOL_CALL_LISTENERS, type ToolCallInfo, type ToolCallListener } from './chat/tool-call-listener.ts';

// Models and usage
export { resolveModel, UnsupportedModelError, SUPPORTED_MODEL_SPECIFICATIONS, type SupportedLanguageModel } from './model/resolve-model.ts';
export { addUsage, totalTokens, ZERO_USAGE, type Usage } from './model/usage.ts';

// Built-in advisors
export {
  ToolCallingAdvisor,
  ToolCallAdvisor,
  ToolCallLimitExceededError,
  type ToolCallingAdvisorOptions,
  type ToolCallAdvisorOptions,
  type ToolApproval,
} from './advisors/tool-call-advisor.ts';
export type { GovernorToolContext } from './chat/tool-context.ts';
export { LOOP_ENDING_TOOLS } from './advisors/loop-ending.ts';
export { toolApprovalResponse, InvalidToolApprovalError, UnansweredToolApprovalError } from './advisors/tool-approval.ts';
export { DEFAULT_TOOL_TIMEOUT_MS, ToolTimeoutError } from './advisors/tool-timeout.ts';
export {
  StructuredOutputValidationAdvisor,
  StructuredOutputValidationError,
  type StructuredOutputValidationAdvisorOptions,
} from './advisors/structured-output-validation-advisor.ts';
export { SimpleLoggerAdvisor, type SimpleLoggerAdvisorOptions, type ChatLogRecord } from './advisors/simple-logger-advisor.ts';
export { SafeGuardAdvisor, type SafeGuardAdvisorOptions } from './advisors/safe-guard-advisor.ts';
export { redact, redactSecrets, redactValue, REDACTED } from './redaction/redact.ts';

// Errors
export { GovernorError, InvalidOptionError, type GovernorErrorCode } from './errors/governor-error.ts';
export { MissingDependencyError } from './errors/missing-dependency-error.ts';
export { UnsupportedRuntimeError } from './errors/unsupported-runtime-error.ts';
export { DEFAULT_MAX_NESTING_DEPTH, NestingTooDeepError } from './errors/nesting-depth.ts';

// Retrieval
export * from './rag/index.ts';

// Chat memory
export * from './memory/index.ts';

// Harness
export * from './harness/index.ts';
export {
  AgentLoop,
  type AgentLoopOptions,
  type AgentLoopResult,
  type AgentLoopStatus,
  type AgentLoopEvent,
  type ToolApprovalAnswer,
} from './harness/agent-loop.ts';

// Agent breaker
export * from './breaker/index.ts';
export { breakerForAiSdk, type AiSdkBreaker, type AiSdkBreakerOptions, type ObservingBreaker } from './breaker/ai-sdk-adapter.ts';
export { MiniAgent, type MiniAgentOptions } from './harness/mini-agent.ts';

// Observability: OpenTelemetry settings, health
export * from './telemetry/index.ts';

// Replay of recorded trajectories
export * from './replay/index.ts';
export { BreakerRecoveryAdvisor, type BreakerRecoveryAdvisorOptions } from './breaker/breaker-recovery-advisor.ts';
