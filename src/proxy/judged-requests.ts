import type { BreakerStore } from '../breaker/breaker-store.ts';
import { redact } from '../redaction/redact.ts';
import { parseCallsNote } from './calls-note.ts';
import { RecentMap } from './recent-map.ts';

/** The verdict a tool call of an answer got, known by the call's print (`AgentBreaker.printToolCall`). */
export interface CallVerdict {
  readonly print: string;
  readonly action: 'allow' | 'steer' | 'block';
  readonly message?: string;
}

/**
 * The verdicts on the tool calls of the answer to a session's latest
 * escalated request, so that a retry of the request (which a load balancer
 * may send to another replica) gets them again: checking its answer's calls
 * anew would judge them on the state the first answer's escalation left, one
 * rung up.
 */
export interface JudgedRequests {
  /** Keeps the verdicts on the answer to the request known by `request`, in place of the session's earlier ones. */
  put(sessionId: string, request: string, verdicts: readonly CallVerdict[]): Promise<void>;
  /** The verdicts kept for the request known by `request`, when they are the session's latest. */
  of(sessionId: string, request: string): Promise<CallVerdict[] | undefined>;
}

/** The store note that holds them (see BreakerStore.putNote). */
const VERDICTS_NOTE = 'request-verdicts';

/** Sessions whose latest verdicts this process remembers. */
const RECENT_SESSIONS = 10_000;

/** Most calls of one answer kept; an answer with more is not kept, and a retry of it is judged anew. */
const MAX_KEPT_CALLS = 128;

interface Kept {
  readonly request: string;
  readonly verdicts: readonly CallVerdict[];
}

/**
 * Verdicts kept by this process and, when the breaker's store keeps notes
 * (`RedisBreakerStore`), for every replica. The store's copy is read only
 * when this process did not judge the request itself.
 */
export function judgedRequestsFor(store: BreakerStore): JudgedRequests {
  const local = new RecentMap<string, Kept>(RECENT_SESSIONS);
  const { putNote, readNote } = store;
  const shared = putNote !== undefined && readNote !== undefined;
  return {
    async put(sessionId, request, verdicts) {
      if (verdicts.length > MAX_KEPT_CALLS) return;
      local.set(sessionId, { request, verdicts });
      if (!shared) return;
      // A note must hold no secret: a breaker message may quote what the model wrote.
      const calls = verdicts.map(({ print, action, message }) => (message === undefined ? [print, action] : [print, action, redact(message)]));
      // A store outage must not fail the agent's request: this process still knows them.
      await putNote.call(store, sessionId, VERDICTS_NOTE, JSON.stringify({ request, calls })).catch(() => undefined);
    },
    async of(sessionId, request) {
      const here = local.get(sessionId);
      if (here?.request === request) return [...here.verdicts];
      if (!shared) return undefined;
      const text = await readNote.call(store, sessionId, VERDICTS_NOTE).catch(() => undefined);
      const kept = text === undefined ? undefined : parseKept(text);
      return kept?.request === request ? [...kept.verdicts] : undefined;
    },
  };
}

/** A verdicts note as {@link judgedRequestsFor} writes it; anything else (another version's) counts as none. */
function parseKept(text: string): Kept | undefined {
  const note = parseCallsNote(text, 'request', 2, 3);
  if (note === undefined) return undefined;
  const verdicts: CallVerdict[] = [];
  for (const [print, action, message] of note.calls) {
    if (action !== 'allow' && action !== 'steer' && action !== 'block') return undefined;
    verdicts.push(message === undefined ? { print: print!, action } : { print: print!, action, message });
  }
  return { request: note.head, verdicts };
}
