export {
  AgentBreaker,
  type BreakerHealth,
  type BreakerSessionSnapshot,
  type CheckOptions,
  type ObserveOptions,
} from './agent-breaker.ts';
export {
  ALLOW,
  BREAKER_CATEGORIES,
  type BreakerAction,
  type BreakerAllowDecision,
  type BreakerCategory,
  type BreakerDecision,
  type BreakerDecisionReason,
  type BreakerEvidence,
  type BreakerStatus,
  type BreakerSteerDecision,
  type BreakerStopDecision,
} from './breaker-decision.ts';
export {
  AgentBreakerError,
  BreakerOpenError,
  BreakerUnavailableError,
  BudgetExceededError,
  CycleError,
  DelegationLoopError,
  ErrorLoopError,
  RagFixationError,
  TextRepetitionError,
  TokenDriftError,
  ToolCallBlockedError,
  ToolSpiralError,
  breakerErrorFor,
} from './breaker-errors.ts';
export type {
  BreakerEvent,
  DelegationEvent,
  ModelEvent,
  ProposedToolCall,
  RetrievalEvent,
  ToolCallEvent,
  UserEvent,
} from './breaker-event.ts';
export type {
  BreakerEscalationRecord,
  BreakerEventRecord,
  BreakerListener,
  BreakerNoticeRecord,
  BreakerStateChangeRecord,
  BreakerWarningCode,
  BreakerWarningRecord,
} from './breaker-events.ts';
export { breakerMessage } from './breaker-messages.ts';
export {
  DEFAULT_READ_ONLY_TOOLS,
  resolveAgentBreakerOptions,
  type AgentBreakerOptions,
  type BudgetOptions,
  type CycleOptions,
  type DelegationAgentOptions,
  type DelegationOptions,
  type ErrorLoopOptions,
  type ErrorLoopToolOptions,
  type EscalationAction,
  type EscalationLadder,
  type EvidenceWindows,
  type RagFixationOptions,
  type ResolvedAgentBreakerOptions,
  type TextRepetitionOptions,
  type TokenDriftOptions,
  type ToolSpiralOptions,
  type ToolSpiralToolOptions,
} from './breaker-options.ts';
export {
  initialState,
  type BreakerCounters,
  type BreakerSessionState,
  type BudgetState,
  type DelegationRecord,
  type DriftState,
  type RetrievalRecord,
  type TextRecord,
  type ToolRecord,
  type UserTurnsState,
} from './breaker-state.ts';
export type { AppliedOp, BreakerStore, BreakerStoreStatus, SessionOp, SessionRead, SessionReducer, SessionRetention } from './breaker-store.ts';
export type { AnswerPrint, TaskPrint } from './detectors/delegation-loop.ts';
export type { ResultDigest, ToolProposal } from './detectors/tool-record.ts';
export type { Outcome as SessionOutcome } from './session-logic.ts';
export { InMemoryBreakerStore, type InMemoryBreakerStoreOptions } from './in-memory-breaker-store.ts';
export { decodeOp, encodeOp, InvalidOpError } from './op-codec.ts';
export { decodeState, encodeState, InvalidStateError } from './state-codec.ts';
export { compressState, decompressState } from './state-compression.ts';
export type { BreakerEngine } from './breaker-advisor.ts';
export * from './similarity/index.ts';
