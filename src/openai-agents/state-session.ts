// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> (its generics are invariant); these mirror them so any state fits.
import type { Agent, ModelResponse, RunState } from '@openai/agents';

type AnyRunState = RunState<any, Agent<any, any>>;
type StateJson = ReturnType<AnyRunState['toJSON']>;
type SavedResponse = StateJson['modelResponses'][number];

/**
 * Where a saved state records its breaker session: a key of its model
 * responses' `providerData`. That is a place a state keeps, restores and
 * saves again as it is, whatever the run's context, tracing or session;
 * the SDK never acts on it (it sends the model the responses' output items,
 * never their provider data, and a session stores items); and a state waiting
 * for approval always has one: the response that asked for the call.
 */
const SESSION_KEY = 'agentGovernor';

/** What a saved state records under {@link SESSION_KEY}. The session id only: it names the session and grants nothing. */
interface RecordedSession {
  readonly sessionId: string;
}

/**
 * The session of each state a door handed out or resumed. Shared by every
 * door, as a saved state is: a state is one run wherever it resumes.
 */
const sessions = new WeakMap<AnyRunState, string>();

/**
 * Keeps a state under a session: resuming it (the object, or its text saved
 * with `toString`/`toJSON` and restored with `RunState.fromString`) goes on
 * in that session. Called again, the state moves to the session given.
 */
export function keepSession(state: AnyRunState, sessionId: string): void {
  const kept = sessions.has(state);
  sessions.set(state, sessionId);
  if (kept) return;
  const toJSON = state.toJSON;
  // Recorded in what is saved, not in the state: the run's own responses (`result.rawResponses`) stay as the model gave them.
  Object.defineProperty(state, 'toJSON', {
    configurable: true,
    enumerable: false,
    writable: true,
    value: (options?: Parameters<AnyRunState['toJSON']>[0]): StateJson => recordSession(toJSON.call(state, options), sessions.get(state) ?? sessionId),
  });
}

/**
 * The session a state belongs to: the one it was kept under here, else the
 * one its saved text recorded (the last response's record wins, as the run
 * goes on in the session it last ran in). Undefined for a state no door
 * kept: one saved by a door that did not record sessions, or with no model
 * response yet (a run stopped before its first answer).
 */
export function sessionOfState(state: AnyRunState): string | undefined {
  const kept = sessions.get(state);
  if (kept !== undefined) return kept;
  const responses: unknown = state._modelResponses;
  if (!Array.isArray(responses)) return undefined;
  for (let i = responses.length - 1; i >= 0; i -= 1) {
    const recorded = recordedIn(responses[i] as ModelResponse | undefined);
    if (recorded !== undefined) return recorded;
  }
  return undefined;
}

/** The session recorded in a restored response, if it holds a well-formed record (anything else is not ours, and ignored). */
function recordedIn(response: ModelResponse | undefined): string | undefined {
  const record: unknown = response?.providerData?.[SESSION_KEY];
  if (typeof record !== 'object' || record === null) return undefined;
  const sessionId = (record as Partial<RecordedSession>).sessionId;
  return typeof sessionId === 'string' && sessionId !== '' ? sessionId : undefined;
}

/**
 * The saved state with every response recording the session. Every one
 * alike: the SDK refuses to restore a state whose last response and
 * `lastModelResponse` differ.
 */
function recordSession(json: StateJson, sessionId: string): StateJson {
  const record: RecordedSession = { sessionId };
  const withRecord = (response: SavedResponse): SavedResponse => ({ ...response, providerData: { ...response.providerData, [SESSION_KEY]: record } });
  return {
    ...json,
    modelResponses: json.modelResponses.map(withRecord),
    lastModelResponse: json.lastModelResponse === undefined ? undefined : withRecord(json.lastModelResponse),
  };
}
