import type { BreakerStore } from '../breaker/breaker-store.ts';
import { RecentMap } from './recent-map.ts';

/**
 * Which session produced a response, so that a request continuing it
 * (`previous_response_id`), which carries neither the conversation's prompt
 * nor a session of its own, is judged in that session.
 */
export interface ResponseSessions {
  /** Notes that the session produced the response; `shared` asks that every replica can look it up. */
  add(sessionId: string, responseId: string, shared: boolean): Promise<void>;
  sessionOf(responseId: string): Promise<string | undefined>;
}

/** Responses remembered per process. */
const RECENT_RESPONSES = 10_000;

/** Store aliases are shared with other uses: a response's carries this prefix. */
const ALIAS_PREFIX = 'response:';

/**
 * Responses noted by this process, and, when the breaker's store keeps
 * aliases (`RedisBreakerStore`), by every replica: a continued response is
 * judged in its session whichever replica answered it.
 */
export function responseSessionsFor(store: BreakerStore): ResponseSessions {
  const local = new RecentMap<string, string>(RECENT_RESPONSES);
  const { addAlias, sessionOfAlias } = store;
  const shared = addAlias !== undefined && sessionOfAlias !== undefined;
  return {
    async add(sessionId, responseId, share) {
      local.set(responseId, sessionId);
      // A store outage must not fail the agent's request: this process still knows it.
      if (shared && share) await addAlias.call(store, sessionId, ALIAS_PREFIX + responseId).catch(() => undefined);
    },
    async sessionOf(responseId) {
      const here = local.get(responseId);
      if (here !== undefined || !shared) return here;
      const found = await sessionOfAlias.call(store, ALIAS_PREFIX + responseId).catch(() => undefined);
      if (found !== undefined) local.set(responseId, found);
      return found;
    },
  };
}
