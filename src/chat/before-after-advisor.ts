import { GovernorError } from '../errors/governor-error.ts';
import { describeValue, is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { AdvisorOrder, type Advisor, type AdvisorChain } from './advisor.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';

/** The two hooks of a simple advisor; both may be async, both are optional. */
export interface BeforeAfterHooks {
  readonly name: string;
  /** @default AdvisorOrder.DEFAULT */
  readonly order?: number;
  /** Changes the request on its way in; must return it (or a changed copy). */
  before?(request: ChatClientRequest): ChatClientRequest | Promise<ChatClientRequest>;
  /** Changes the response on its way out (in `stream()`, the final `finish` response); must return it (or a changed copy). */
  after?(response: ChatClientResponse, request: ChatClientRequest): ChatClientResponse | Promise<ChatClientResponse>;
}

/** What each option of beforeAfterAdvisor accepts. */
const BEFORE_AFTER_HOOKS_RULES: OptionRules<BeforeAfterHooks> = {
  name: is.string({ nonEmpty: true }),
  order: is.number(-Number.MAX_VALUE),
  before: is.function(),
  after: is.function(),
};

/**
 * Thrown by an advisor of {@link beforeAfterAdvisor}, in `call()` and
 * `stream()` alike, when its `before` hook returns something other than a
 * request (checked before the model is called) or its `after` hook something
 * other than a response (checked before the response goes on to the advisors
 * outside it, so a chat memory stores nothing of the call). Usually a hook
 * that only looks, and forgot to return what it was given.
 */
export class AdvisorHookResultError extends GovernorError {
  declare readonly code: 'GOVERNOR_ADVISOR_HOOK_RESULT';
  /** The advisor's name. */
  readonly advisor: string;
  /** The hook that returned the wrong thing. */
  readonly hook: 'before' | 'after';

  constructor(advisor: string, hook: 'before' | 'after', returned: unknown) {
    const what = hook === 'before' ? 'request' : 'response';
    super(
      'GOVERNOR_ADVISOR_HOOK_RESULT',
      `beforeAfterAdvisor "${advisor}": its ${hook} hook returned ${describeValue(returned)}, but it must return the ${what} ` +
        `(the ${what} it was given, or a changed copy of it): end the hook with \`return ${what};\`.`,
    );
    this.advisor = advisor;
    this.hook = hook;
  }
}

/**
 * Builds the common advisor that only looks at the request before and the
 * response after, for both `call()` and `stream()`.
 *
 * @throws {InvalidOptionError} naming the option when `hooks` has no `name`, an unknown key (a misspelt hook), or a value of the wrong type.
 * @throws {AdvisorHookResultError} from `call()` and `stream()` when a hook returns something other than the request or response.
 */
export function beforeAfterAdvisor(hooks: BeforeAfterHooks): Advisor {
  validateOptions('beforeAfterAdvisor', hooks, BEFORE_AFTER_HOOKS_RULES, { required: ['name'] });
  const before = async (request: ChatClientRequest): Promise<ChatClientRequest> => {
    if (!hooks.before) return request;
    const advised: unknown = await hooks.before(request);
    if (!isRequest(advised)) throw new AdvisorHookResultError(hooks.name, 'before', advised);
    return advised;
  };
  const after = async (response: ChatClientResponse, request: ChatClientRequest): Promise<ChatClientResponse> => {
    if (!hooks.after) return response;
    const advised: unknown = await hooks.after(response, request);
    if (!isResponse(advised)) throw new AdvisorHookResultError(hooks.name, 'after', advised);
    return advised;
  };
  return {
    name: hooks.name,
    order: hooks.order ?? AdvisorOrder.DEFAULT,
    async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
      const advised = await before(request);
      return after(await chain.nextCall(advised), advised);
    },
    async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
      const advised = await before(request);
      for await (const event of chain.nextStream(advised)) {
        if (event.type === 'finish' && hooks.after) yield { type: 'finish', response: await after(event.response, advised) };
        else yield event;
      }
    },
  };
}

// Only what the chain reads of every request and response: enough to catch a hook that returned nothing or the wrong object.
function isRequest(value: unknown): value is ChatClientRequest {
  const request = value as Partial<ChatClientRequest> | null | undefined;
  return typeof value === 'object' && Array.isArray(request?.messages) && request.context instanceof Map;
}

function isResponse(value: unknown): value is ChatClientResponse {
  const response = value as Partial<ChatClientResponse> | null | undefined;
  return typeof value === 'object' && typeof response?.response === 'object' && response.response !== null && response.context instanceof Map;
}
