import { GovernorError } from '../errors/governor-error.ts';
import { describeValue } from '../errors/validate-options.ts';
import type { Advisor, AdvisorChain } from './advisor.ts';
import { traceAdvisorCall, traceAdvisorStream } from './advisor-span.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';

/** Thrown by `chain.copy(after)` when `after` is not part of the chain. */
export class AdvisorNotInChainError extends GovernorError {
  declare readonly code: 'GOVERNOR_ADVISOR_NOT_IN_CHAIN';
  constructor(name: string, available: readonly string[]) {
    super(
      'GOVERNOR_ADVISOR_NOT_IN_CHAIN',
      `Advisor "${name}" is not in this chain, so there is nothing "after" it to copy. ` +
        `Advisors in the chain: ${available.length > 0 ? available.join(', ') : '(none)'}. ` +
        'A recursive advisor must call chain.copy(this) with itself.',
    );
  }
}

/**
 * Thrown by `build()`, `call()` and `stream()` when one advisor instance is
 * registered twice in a chain (a client default added again per request, or
 * twice in `defaultAdvisors`). A recursive advisor would wrap itself, and a
 * stateful one would count or log every round twice: almost always a mistake.
 */
export class DuplicateAdvisorError extends GovernorError {
  declare readonly code: 'GOVERNOR_DUPLICATE_ADVISOR';
  /** The advisor's name. */
  readonly advisor: string;

  constructor(advisor: Advisor) {
    super(
      'GOVERNOR_DUPLICATE_ADVISOR',
      `Advisor "${advisor.name}" (order ${advisor.order}) is registered twice in the same chain: the same instance ` +
        'was added more than once (as a client default and again on the request, or twice in defaultAdvisors). ' +
        'Register it once; to really run it twice, add a second instance.',
    );
    this.advisor = advisor.name;
  }
}

/**
 * Thrown when an advisor's `adviseCall` resolves to something other than a
 * response, or its `adviseStream` returns something other than an async
 * iterable of events: usually a method that forgot to return what the rest
 * of the chain gave it.
 */
export class AdvisorResultError extends GovernorError {
  declare readonly code: 'GOVERNOR_ADVISOR_RESULT';
  /** The advisor's name. */
  readonly advisor: string;
  /** The method that returned the wrong thing. */
  readonly method: 'adviseCall' | 'adviseStream';

  constructor(advisor: Advisor, method: 'adviseCall' | 'adviseStream', returned: unknown) {
    const fix =
      method === 'adviseCall'
        ? 'resolve to the response chain.nextCall(request) gave (or a changed copy of it): `return chain.nextCall(request);`'
        : 'return the events of chain.nextStream(request) (or changed ones): write it as `async *adviseStream(request, chain)` and `yield* chain.nextStream(request);`';
    super('GOVERNOR_ADVISOR_RESULT', `Advisor "${advisor.name}" (order ${advisor.order}): ${method} returned ${describeValue(returned)}, but it must ${fix}.`);
    this.advisor = advisor.name;
    this.method = method;
  }
}

function checkedResponse(advisor: Advisor, response: unknown): ChatClientResponse {
  const r = response as Partial<ChatClientResponse> | null;
  if (typeof r !== 'object' || r === null || typeof r.response !== 'object' || r.response === null)
    throw new AdvisorResultError(advisor, 'adviseCall', response);
  return response as ChatClientResponse;
}

function checkedEvents(advisor: Advisor, events: unknown): AsyncIterable<ChatStreamEvent> {
  if (typeof (events as Partial<AsyncIterable<unknown>> | null)?.[Symbol.asyncIterator] !== 'function')
    throw new AdvisorResultError(advisor, 'adviseStream', events);
  return events as AsyncIterable<ChatStreamEvent>;
}

/** What ends every chain: one model round trip. */
export interface ModelTerminal {
  call(request: ChatClientRequest): Promise<ChatClientResponse>;
  stream(request: ChatClientRequest): AsyncIterable<ChatStreamEvent>;
}

/**
 * Sorts advisors by `order`; equal orders keep registration order
 * (Array.prototype.sort is stable).
 */
export function sortAdvisors(advisors: readonly Advisor[]): Advisor[] {
  return [...advisors].sort((a, b) => a.order - b.order);
}

/**
 * An immutable position in an ordered advisor list. Holding the full list lets
 * `copy(after)` find advisors that have already run (the recursive advisor
 * itself), while `nextCall`/`nextStream` only look forward.
 */
export class DefaultAdvisorChain implements AdvisorChain {
  readonly #all: readonly Advisor[];
  readonly #start: number;
  readonly #terminal: ModelTerminal;

  /** @param advisors advisors already sorted by order (see {@link sortAdvisors}). */
  constructor(advisors: readonly Advisor[], terminal: ModelTerminal, start = 0) {
    this.#all = advisors;
    this.#terminal = terminal;
    this.#start = start;
  }

  get advisors(): readonly Advisor[] {
    return this.#all.slice(this.#start);
  }

  nextCall(request: ChatClientRequest): Promise<ChatClientResponse> {
    for (let i = this.#start; i < this.#all.length; i++) {
      const advisor = this.#all[i]!;
      if (advisor.adviseCall) {
        const rest = new DefaultAdvisorChain(this.#all, this.#terminal, i + 1);
        return traceAdvisorCall(advisor, request, async () => checkedResponse(advisor, await advisor.adviseCall!(request, rest)));
      }
    }
    return this.#terminal.call(request);
  }

  nextStream(request: ChatClientRequest): AsyncIterable<ChatStreamEvent> {
    for (let i = this.#start; i < this.#all.length; i++) {
      const advisor = this.#all[i]!;
      if (advisor.adviseStream) {
        const rest = new DefaultAdvisorChain(this.#all, this.#terminal, i + 1);
        return traceAdvisorStream(advisor, request, () => checkedEvents(advisor, advisor.adviseStream!(request, rest)));
      }
    }
    return this.#terminal.stream(request);
  }

  /**
   * The chain after the occurrence of `after` nearest before this position:
   * the advisor that was handed this chain. Searching by position, not from
   * the front, matters when one advisor sits in the list twice: the second
   * occurrence must not get a chain that starts at itself again, which would
   * recurse without end.
   */
  copy(after: Advisor): AdvisorChain {
    // (A negative fromIndex would count from the end: position 0 has nothing before it.)
    let index = this.#start > 0 ? this.#all.lastIndexOf(after, this.#start - 1) : -1;
    // A chain no advisor was handed yet (built by hand, position 0): the first occurrence from here on.
    if (index < 0) index = this.#all.indexOf(after, this.#start);
    if (index < 0)
      throw new AdvisorNotInChainError(
        after.name,
        this.#all.map((a) => a.name),
      );
    return new DefaultAdvisorChain(this.#all, this.#terminal, index + 1);
  }
}
