import type { ModelMessage } from 'ai';
import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import { ADVISOR_PLACEMENT } from '../chat/advisor-placement.ts';
import { isBreakerNote } from '../chat/breaker-note.ts';
import { CONTINUATION_TURN, CONTINUED_TASK } from '../chat/observation.ts';
import { conversationIdOf, sessionIdOf } from '../chat/advisor-context.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import type { ChatMemory } from '../memory/chat-memory.ts';
import { AgentBreakerError, BreakerOpenError } from './breaker-errors.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link BreakerRecoveryAdvisor}. */
export interface BreakerRecoveryAdvisorOptions {
  /** The breaker whose stops are recovered from (its session is reset before the retry). */
  readonly breaker: { reset(sessionId: string, options?: { readonly evidence?: boolean }): Promise<void> };
  /**
   * The conversation memory to flush and seed with the summary: the memory
   * of the chain's `MessageChatMemoryAdvisor` or `PromptChatMemoryAdvisor`.
   * The summary is stored as a system message, which both add to the
   * request's instructions (after the client's own system prompt), so the
   * retried call sees it.
   * @default none: only the retry's prompt carries the summary
   */
  readonly memory?: ChatMemory;
  /**
   * Writes the summary that replaces the flushed history.
   * @default a fixed text naming what was repeated and asking for a different approach
   */
  readonly summarize?: (stop: AgentBreakerError, history: readonly ModelMessage[]) => string | Promise<string>;
  /** @default AdvisorOrder.MEMORY - 1 (outside memory, retrieval and the tool loop) */
  readonly order?: number;
}

/** The stop to recover from; anything else is thrown on. */
function recoverable(error: unknown): AgentBreakerError {
  // isInstance, not instanceof: a stop from a second installed copy of the package (or a bundle) is a stop too.
  if (!AgentBreakerError.isInstance(error)) throw error;
  // An open breaker is no new stop: there is nothing to recover from in this call.
  if (BreakerOpenError.isInstance(error as unknown)) throw error;
  if (error.category === 'budget') throw error; // a budget is not a loop: retrying would spend it again
  return error;
}

function defaultSummary(stop: AgentBreakerError): string {
  return (
    `Summary of the earlier attempt: it was stopped because it went round in circles (${stop.category}). ` +
    `${stop.message} Start again from the task below and take a different approach; do not repeat what was repeated.`
  );
}

/**
 * What the retry is sent of the conversation: its last user message, what
 * the stopped call answered. On a continuation turn that message is the
 * caller's reminder (`AgentLoop`'s "you have not called submit yet"), not
 * the task: the task it goes on with (`CONTINUED_TASK`) goes before it, or
 * the retry would start again from nothing.
 */
function retriedTurns(request: ChatClientRequest): ModelMessage[] {
  const last = request.messages.findLast((message) => message.role === 'user' && !isBreakerNote(message));
  if (last === undefined) return [];
  const task = request.context.get(CONTINUED_TASK) as ModelMessage | undefined;
  const continued = request.context.get(CONTINUATION_TURN) === true && task?.role === 'user';
  return continued && JSON.stringify(task.content) !== JSON.stringify(last.content) ? [task, last] : [last];
}

/** What each option of BreakerRecoveryAdvisor accepts. */
const BREAKER_RECOVERY_ADVISOR_OPTION_RULES: OptionRules<BreakerRecoveryAdvisorOptions> = {
  breaker: is.having('an AgentBreaker (with reset(sessionId))', 'reset'),
  memory: is.having('a ChatMemory (with get, add and clear)', 'get', 'add', 'clear'),
  summarize: is.function(),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * The breaker's optional `recover` action, as a recursive advisor: when the
 * breaker stops a call, it flushes the conversation memory, puts a summary in
 * its place, resets the breaker's baselines for the session (budgets stay) and
 * retries the call once. A second stop in the same call is thrown as usual;
 * so is a stop while the breaker is OPEN for another reason.
 */
export class BreakerRecoveryAdvisor implements Advisor {
  readonly name = 'BreakerRecoveryAdvisor';
  /** Outside the memory advisors and the tool loop: the call it retries goes through them anew (see checkAdvisorPlacement). */
  readonly [ADVISOR_PLACEMENT] = 'outermost';
  readonly order: number;
  readonly #options: BreakerRecoveryAdvisorOptions;

  constructor(options: BreakerRecoveryAdvisorOptions) {
    validateOptions('BreakerRecoveryAdvisor', options, BREAKER_RECOVERY_ADVISOR_OPTION_RULES, { required: ['breaker'] });
    this.#options = options;
    this.order = options.order ?? AdvisorOrder.MEMORY - 1;
  }

  async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    try {
      return await chain.copy(this).nextCall(request);
    } catch (error) {
      const retry = await this.#recover(request, recoverable(error));
      return chain.copy(this).nextCall(retry);
    }
  }

  /**
   * Streaming: the same. What the stopped attempt already streamed stays
   * streamed; the retry's events follow, and its `finish` is the only one.
   */
  async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    let stop: AgentBreakerError;
    try {
      yield* chain.copy(this).nextStream(request);
      return;
    } catch (error) {
      stop = recoverable(error);
    }
    yield* chain.copy(this).nextStream(await this.#recover(request, stop));
  }

  async #recover(request: ChatClientRequest, stop: AgentBreakerError): Promise<ChatClientRequest> {
    const conversationId = conversationIdOf(request.context);
    const { memory, summarize, breaker } = this.#options;
    // The baselines go first: the retry is a fresh attempt, judged from scratch (budgets stay). A store that cannot
    // reset them leaves no second chance: the stop stands, and the memory is left as it was.
    await breaker.reset(sessionIdOf(request.context), { evidence: true }).catch(() => {
      throw stop;
    });
    const history = memory ? await memory.get(conversationId) : [...request.messages];
    const summary = summarize ? await summarize(stop, history) : defaultSummary(stop);
    if (memory) {
      await memory.clear(conversationId);
      await memory.add(conversationId, [{ role: 'system', content: summary }]);
    }
    request.context.set('governor.breaker.recovered', { category: stop.category, message: stop.message });
    const messages: ModelMessage[] = memory ? [] : [{ role: 'user', content: summary }];
    messages.push(...retriedTurns(request));
    return { ...request, messages };
  }
}
