import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';

/**
 * The rest of the chain, as seen by one advisor. Call `nextCall`/`nextStream`
 * once to pass the request on; a recursive advisor calls `copy(this)` to get a
 * fresh chain of only the advisors after it, as many times as it loops.
 */
export interface AdvisorChain {
  nextCall(request: ChatClientRequest): Promise<ChatClientResponse>;
  nextStream(request: ChatClientRequest): AsyncIterable<ChatStreamEvent>;
  /** A new chain holding only the advisors after `after`; throws `AdvisorNotInChainError` if `after` is not in this chain. */
  copy(after: Advisor): AdvisorChain;
  /** The advisors this chain will still run, outermost first. */
  readonly advisors: readonly Advisor[];
}

/**
 * Intercepts requests and responses. Lower `order` runs first (outermost):
 * it sees the request before, and the response after, every higher one.
 * An advisor without `adviseCall` is skipped in `call()`, one without
 * `adviseStream` in `stream()`.
 */
export interface Advisor {
  readonly name: string;
  readonly order: number;
  adviseCall?(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse>;
  adviseStream?(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent>;
}

/** Well-known orders. The tool loop sits near the outside so that most advisors observe every round. */
export const AdvisorOrder = {
  HIGHEST_PRECEDENCE: Number.MIN_SAFE_INTEGER,
  LOWEST_PRECEDENCE: Number.MAX_SAFE_INTEGER,
  /** Memory and retrieval: once per call, outside the tool loop. */
  MEMORY: -2_000_000,
  RETRIEVAL: -1_500_000,
  /** The ToolCallAdvisor. */
  TOOL_LOOP: -1_000_000,
  /** The AgentBreaker: just inside the tool loop, so it sees every round first. */
  BREAKER: -900_000,
  DEFAULT: 0,
  /** Structured-output validation: close to the model. */
  VALIDATION: 1_000_000,
} as const;
