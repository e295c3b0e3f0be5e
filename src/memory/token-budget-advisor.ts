import type { ModelMessage } from 'ai';
import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import { isBreakerNote } from '../chat/breaker-note.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { countMessageTokens } from './message-tokens.ts';
import { selectWindow } from './message-window.ts';
import { CharsPerTokenEstimator, type Tokenizer } from './tokenizer.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link TokenBudgetAdvisor}. */
export interface TokenBudgetAdvisorOptions {
  /** Most tokens the system prompt and the messages of a model call may hold together. */
  readonly maxTokens: number;
  /**
   * Counts tokens.
   * @default a CharsPerTokenEstimator (4 characters per token: an estimate)
   */
  readonly tokenizer?: Tokenizer;
  /**
   * Position in the chain. The default puts it inside the tool loop, so the
   * prompt of every round is held to the ceiling as tool results pile up.
   * @default AdvisorOrder.DEFAULT
   */
  readonly order?: number;
}

/** What each option of TokenBudgetAdvisor accepts. */
const TOKEN_BUDGET_ADVISOR_OPTION_RULES: OptionRules<TokenBudgetAdvisorOptions> = {
  maxTokens: is.integer(1),
  tokenizer: is.having('a Tokenizer (with count(text))', 'count'),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * Holds each model call's prompt to a token ceiling by dropping history,
 * oldest first, in whole groups: a tool call never loses its result, and
 * the history never starts with an orphan tool result.
 *
 * The current turn (the last user message and everything after it, i.e. the
 * tool rounds of this call; a breaker's `[AgentBreaker]` steer note is part
 * of the turn it interrupts, not the start of one) and the system prompt are
 * never cut; when they alone are over the ceiling the call goes out with no
 * history at all rather than with a mangled turn. Tool definitions are not
 * counted.
 */
export class TokenBudgetAdvisor implements Advisor {
  readonly name = 'TokenBudgetAdvisor';
  readonly order: number;
  readonly #maxTokens: number;
  readonly #tokenizer: Tokenizer;

  constructor(options: TokenBudgetAdvisorOptions) {
    validateOptions('TokenBudgetAdvisor', options, TOKEN_BUDGET_ADVISOR_OPTION_RULES, { required: ['maxTokens'] });
    if (options.tokenizer !== undefined && typeof options.tokenizer.count !== 'function') {
      throw new InvalidOptionError('tokenizer', 'must have a count(text) method');
    }
    this.#maxTokens = options.maxTokens;
    this.#tokenizer = options.tokenizer ?? new CharsPerTokenEstimator();
    this.order = options.order ?? AdvisorOrder.DEFAULT;
  }

  adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    return chain.nextCall(this.#trimmed(request));
  }

  adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    return chain.nextStream(this.#trimmed(request));
  }

  #trimmed(request: ChatClientRequest): ChatClientRequest {
    const cost = (message: ModelMessage): number => countMessageTokens(message, this.#tokenizer);
    const systemTokens = request.system === undefined ? 0 : this.#tokenizer.count(request.system);
    const total = request.messages.reduce((sum, message) => sum + cost(message), systemTokens);
    if (total <= this.#maxTokens) return request;

    const turnStart = currentTurnStart(request.messages);
    const history = request.messages.slice(0, turnStart);
    const turn = request.messages.slice(turnStart);
    // System messages among the history are instructions, as the system prompt is: kept in place, and counted.
    const instructions = history.filter((message) => message.role === 'system');
    const fixedTokens = [...turn, ...instructions].reduce((sum, message) => sum + cost(message), systemTokens);
    const budget = this.#maxTokens - fixedTokens;
    const window = new Set(
      budget > 0
        ? selectWindow(
            history.filter((message) => message.role !== 'system'),
            budget,
            cost,
          )
        : [],
    );
    return { ...request, messages: [...history.filter((message) => message.role === 'system' || window.has(message)), ...turn] };
  }
}

/**
 * Index of the last user message that is not a breaker note (a steer appended
 * to a tool round belongs to the turn it interrupts; it does not start one);
 * without one, of the last message that is not a tool result (so the turn
 * keeps the call its results answer).
 */
function currentTurnStart(messages: readonly ModelMessage[]): number {
  const lastUser = messages.findLastIndex((message) => message.role === 'user' && !isBreakerNote(message));
  if (lastUser >= 0) return lastUser;
  let start = messages.length - 1;
  while (start > 0 && messages[start]?.role === 'tool') start--;
  return Math.max(0, start);
}
