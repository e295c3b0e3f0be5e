import { AdvisorOrder, type Advisor, type AdvisorChain } from './advisor.ts';
import type { ChatClientRequest } from './chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from './chat-response.ts';

/** The two hooks of a simple advisor; both may be async, both are optional. */
export interface BeforeAfterHooks {
  readonly name: string;
  /** @default AdvisorOrder.DEFAULT */
  readonly order?: number;
  /** Changes the request on its way in. */
  before?(request: ChatClientRequest): ChatClientRequest | Promise<ChatClientRequest>;
  /** Changes the response on its way out (in `stream()`, the final `finish` response). */
  after?(response: ChatClientResponse, request: ChatClientRequest): ChatClientResponse | Promise<ChatClientResponse>;
}

/**
 * Builds the common advisor that only looks at the request before and the
 * response after, for both `call()` and `stream()`.
 */
export function beforeAfterAdvisor(hooks: BeforeAfterHooks): Advisor {
  const advisor: Advisor = {
    name: hooks.name,
    order: hooks.order ?? AdvisorOrder.DEFAULT,
    async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
      const advised = hooks.before ? await hooks.before(request) : request;
      const response = await chain.nextCall(advised);
      return hooks.after ? hooks.after(response, advised) : response;
    },
    async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
      const advised = hooks.before ? await hooks.before(request) : request;
      for await (const event of chain.nextStream(advised)) {
        if (event.type === 'finish' && hooks.after) yield { type: 'finish', response: await hooks.after(event.response, advised) };
        else yield event;
      }
    },
  };
  return advisor;
}
