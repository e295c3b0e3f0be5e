import type { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import { messageBody } from '../breaker/breaker-messages.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { type SeenSet, seenSetFor } from './seen-set.ts';
import { observeRound } from '../breaker/observe-round.ts';
import { hash53 } from '../breaker/similarity/hash.ts';
import { type CallVerdict, type JudgedRequests, judgedRequestsFor } from './judged-requests.ts';
import { type SteerInbox, steerInboxFor } from './steer-inbox.ts';
import { parseCallsNote } from './calls-note.ts';
import { RecentMap } from './recent-map.ts';
import { type ResponseSessions, responseSessionsFor } from './response-sessions.ts';
import { type JsonObject, NOTE_PREFIX, type RequestTail, type RoundVerdict, type WireApi, type WireRound, type WireToolCall } from './wire-api.ts';

/** Sessions whose latest response is remembered (its id and its tool calls' ids, names and prints). */
const RECENT_SESSIONS = 10_000;

/** The store note that tells every replica the tool calls of a session's latest response (see ProxyJudge.judgeRound). */
const CALLS_NOTE = 'response-calls';

/** Most calls of one response noted for other replicas; a response with more is not noted. */
const MAX_NOTED_CALLS = 128;

/** A session's latest response and its tool calls by id, each known by its print (never its arguments). */
interface LastCalls {
  readonly responseId: string;
  readonly calls: ReadonlyMap<string, WireToolCall>;
}

/** A stop, worded for the agent and for people. */
export interface ProxyStop {
  readonly category: string;
  readonly text: string;
  /** True when the session was already stopped (a refusal, not the stopping answer). */
  readonly refused: boolean;
  /** True when the call was refused unjudged: the store is down and the breaker fails closed (nothing was stopped). */
  readonly unavailable?: boolean;
}

/** What observing a request found (see {@link ProxyJudge.observeRequest}). */
export interface ObservedRequest {
  /** Set when what the request brought stopped the session. */
  readonly stop?: ProxyStop;
  /** What the request is known by among the session's (what it brought: its tool results and user turn, by place and content), when it brought any. */
  readonly key?: string;
  /** True when everything it brought was seen before: a retry of a request already handled, on any replica sharing the store. */
  readonly retry: boolean;
}

/** What a request's gate decided (see {@link ProxyJudge.gate}). */
export interface GateVerdict {
  /** Set when the request must not go upstream. */
  readonly stop?: ProxyStop;
  /** Steer messages for the model with this request. */
  readonly steers: readonly string[];
}

/** The assistant text that ends a stopped run. */
export function stopText(decision: BreakerDecision): string {
  // Why the store failed (its host, its error) is for the operator's log, not for the client or the model.
  if (decision.reason === 'store_unavailable')
    return `${NOTE_PREFIX} The agent breaker cannot reach its store, so this call was refused unjudged (it fails closed). Try again later.`;
  return `${NOTE_PREFIX} This run was stopped by the agent breaker (${decision.category ?? 'breaker'}): ${decision.message === undefined ? 'the session is stopped.' : messageBody(decision.message)}`;
}

/** The name a call with no name is judged under: the breaker needs one, and the proxy must not fail the agent's request over it. */
const UNNAMED_TOOL = '(unnamed tool)';

function nameOf(name: string): string {
  return name.trim() === '' ? UNNAMED_TOOL : name;
}

function toStop(decision: BreakerDecision, refused: boolean): ProxyStop {
  if (decision.reason === 'store_unavailable') return { category: 'store_unavailable', text: stopText(decision), refused, unavailable: true };
  return { category: decision.category ?? 'breaker', text: stopText(decision), refused };
}

/**
 * The breaker as a proxy sees it: a request's new tool results and user turn
 * are observed once each, a response's round and tool calls are judged, and
 * steer messages wait for the session's next request.
 */
export class ProxyJudge {
  readonly breaker: AgentBreaker;
  readonly #inbox: SteerInbox;
  readonly #seen: SeenSet;
  /**
   * Session → its latest response this proxy judged, and that response's tool
   * calls by id as prints: the outputs they bring are observed by print, and
   * kept arguments (any size) would hold memory for thousands of sessions.
   */
  readonly #lastCalls = new RecentMap<string, LastCalls>(RECENT_SESSIONS);
  /** Response id → its session, for requests that continue a stored response. */
  readonly #responses: ResponseSessions;
  /** The verdicts on the session's latest escalated answer, for a retry of its request. */
  readonly #judged: JudgedRequests;

  /** The breaker's observe: every stop it returns is answered to the agent at once (see ObserveOptions.surfaced). */
  readonly #observer: Pick<AgentBreaker, 'observe'>;

  constructor(breaker: AgentBreaker) {
    this.breaker = breaker;
    this.#observer = { observe: (sessionId, event) => breaker.observe(sessionId, event, { surfaced: true }) };
    this.#inbox = steerInboxFor(breaker.options.store);
    this.#seen = seenSetFor(breaker.options.store);
    this.#responses = responseSessionsFor(breaker.options.store);
    this.#judged = judgedRequestsFor(breaker.options.store);
  }

  /**
   * Gate before a request goes upstream: a session already stopped is
   * refused; a stop decided now (the budget's wrap-up round is used up) is
   * the stopping answer. Otherwise the steer messages waiting for this
   * request (see {@link steerNote}): the shared inbox is emptied while the
   * gate reads the session, in the same round trip.
   */
  async gate(sessionId: string): Promise<GateVerdict> {
    const [checked, taken] = await Promise.allSettled([this.breaker.checkModelCall(sessionId), this.#inbox.take(sessionId)]);
    const waiting = taken.status === 'fulfilled' ? taken.value : [];
    if (checked.status === 'rejected' || checked.value.action === 'stop') {
      // The messages stay for the session's next request (a retry of a refused one, one after a reset).
      await this.#inbox.add(sessionId, waiting);
      if (checked.status === 'rejected') throw checked.reason;
      return { stop: toStop(checked.value, checked.value.reason === 'breaker_open'), steers: [] };
    }
    const decision = checked.value;
    const own = (decision.action === 'steer' || decision.action === 'block') && decision.message !== undefined ? [decision.message] : [];
    return { steers: [...waiting, ...own] };
  }

  /**
   * Observes what is new in a request: each tool result and user turn once,
   * even when a request is retried, on this replica or (with a store that
   * shares what was seen) on another. A retry repeats the request, so what was
   * observed is known by its position and its content together: an agent that
   * starts each task afresh puts a new user turn where the last one was, and
   * some servers give every tool call the same id. The same keys tell a
   * retry (see {@link judgeRound}).
   */
  async observeRequest(sessionId: string, tail: RequestTail): Promise<ObservedRequest> {
    const at = `${tail.lastIndex}\u0000`;
    // A call is known by its print, so that the replica that judged it and one that only has its print agree on the key.
    const prints = tail.toolResults.map((r) => r.print ?? this.breaker.printToolCall({ tool: nameOf(r.name), args: r.args }));
    const keys = tail.toolResults.map((r, i) => `${at}tool\u0000${r.id}\u0000${hash53(JSON.stringify([prints[i], r.result, r.error]))}`);
    if (tail.userText !== null) keys.unshift(`${at}user\u0000${hash53(tail.userText)}`);
    const first = await this.#seen.claim(sessionId, keys);
    const request: ObservedRequest =
      keys.length === 0 ? { retry: false } : { key: hash53(keys.join('\n')).toString(36), retry: first.every((claimed) => claimed !== true) };
    if (tail.userText !== null && first.shift() === true) {
      // A steer decided on an observed event waits in the breaker (see steerNote).
      const decision = await this.#observer.observe(sessionId, { kind: 'user', text: tail.userText });
      if (decision.action === 'stop') return { ...request, stop: toStop(decision, false) };
    }
    for (const [i, result] of tail.toolResults.entries()) {
      if (first[i] !== true) continue;
      const event = { kind: 'tool_call', tool: nameOf(result.name), print: prints[i]!, result: result.result, error: result.error } as const;
      // A print another replica noted that this breaker cannot read (another version's, other options) leaves the output unjudged, as before notes.
      const decision = await this.#observer.observe(sessionId, event).catch((error: unknown) => {
        if (result.print !== undefined && InvalidOptionError.isInstance(error)) return undefined;
        throw error;
      });
      if (decision?.action === 'stop') return { ...request, stop: toStop(decision, false) };
    }
    return request;
  }

  /**
   * The steer messages for the request as one note for the model, or
   * undefined: those its gate found waiting (decided on checks, or on
   * another request's events, by whichever replica) and those the breaker
   * queued on the events observed since (`AgentBreaker.takeSteers`), each
   * told once.
   */
  steerNote(sessionId: string, gate: GateVerdict): string | undefined {
    const messages = [...new Set([...gate.steers, ...this.breaker.takeSteers(sessionId)])];
    return messages.length === 0 ? undefined : messages.map((m) => `${NOTE_PREFIX} ${m}`).join('\n\n');
  }

  /**
   * What is new in a request, its tool results matched to the calls of the
   * session's latest response (Responses: the request may not hold them,
   * nor mark where their round began): as this proxy judged it, or else, with a
   * store that keeps notes (`RedisBreakerStore`), as the replica that judged
   * it noted them — one more round trip, only when this proxy cannot tell.
   */
  async requestTail(api: WireApi, body: JsonObject, sessionId: string, continued: string | undefined): Promise<RequestTail> {
    const tail = api.requestTail(body, callsOf(this.#lastCalls.get(sessionId), continued));
    if (tail.unmatched !== true) return tail;
    const shared = callsOf(await this.#notedCalls(sessionId), continued);
    return shared === undefined ? tail : api.requestTail(body, shared);
  }

  /** The session of a response this proxy judged, or (with a store that keeps aliases) any replica did, by the response's id. */
  sessionOfResponse(responseId: string): Promise<string | undefined> {
    return this.#responses.sessionOf(responseId);
  }

  /**
   * Notes a response the proxy wrote itself (a stop) as the session's, when
   * a later request can name it (Responses), unless the request asked the
   * API not to store it.
   */
  async noteResponse(sessionId: string, round: WireRound, request: JsonObject): Promise<void> {
    if (round.responseId !== undefined) await this.#responses.add(sessionId, round.responseId, request['store'] !== false);
  }

  /**
   * Judges a response's round: records it, then judges each tool call before
   * the agent sees it. The answer to a retry (`request`, as
   * {@link observeRequest} found it) gets the verdicts the first answer to
   * its request got on the same calls, whichever replica judged that one: the
   * agent never saw that answer, so its escalation is told again rather
   * than taken a rung further.
   */
  async judgeRound(sessionId: string, round: WireRound, request?: ObservedRequest): Promise<RoundVerdict> {
    const answer = {
      kind: 'model' as const,
      ...(round.model === undefined ? {} : { model: round.model }),
      promptTokens: round.promptTokens,
      completionTokens: round.completionTokens,
      text: round.text,
    };
    // Only a response a later request can name (Responses) is remembered: those requests do not mark where a round begins.
    let prints: readonly string[] | undefined;
    if (round.responseId !== undefined) {
      const printed = round.toolCalls.map((call) => this.breaker.printToolCall({ tool: nameOf(call.name), args: call.args }));
      const calls = new Map(round.toolCalls.map(({ id, name }, i) => [id, { id, name, args: undefined, print: printed[i] }]));
      this.#lastCalls.set(sessionId, { responseId: round.responseId, calls });
      prints = printed;
    }
    const recording = Date.now();
    const retried = request?.retry === true && round.toolCalls.length > 0 ? request.key : undefined;
    // The breaker queues the hosted calls' steers itself (AgentBreaker.takeSteers), for the next request.
    const [verdicts, , earlier] = await Promise.all([
      observeRound(this.#observer, sessionId, answer, round.hosted ?? []),
      round.responseId === undefined ? undefined : this.#responses.add(sessionId, round.responseId, round.stored !== false),
      retried === undefined ? undefined : this.#judged.of(sessionId, retried),
    ]);
    if (verdicts.stop !== undefined) return { stop: toStop(verdicts.stop, false), blocked: new Map() };
    const model = verdicts.answer;
    const blocked = new Map<string, string>();
    const steers: string[] = [];
    // Notes go where another replica can read them: a store that keeps notes, for a response a request can continue (its calls were printed above).
    const { store } = this.breaker.options;
    const noted: [id: string, name: string, print: string][] | undefined =
      round.responseId !== undefined && store.putNote !== undefined && store.readNote !== undefined ? [] : undefined;
    // Each call's own verdict, kept for a retry of the request when one escalated: printed only then, for a retry, or to be remembered.
    const judged: { tool: string; args: unknown; print: string | undefined; action: CallVerdict['action']; message: string | undefined }[] = [];
    let escalated = false;
    for (const [i, call] of round.toolCalls.entries()) {
      const tool = nameOf(call.name);
      const print = prints?.[i] ?? (earlier === undefined ? undefined : this.breaker.printToolCall({ tool, args: call.args }));
      const kept = earlier === undefined || print === undefined ? undefined : takeVerdict(earlier, print);
      // Judged on the session as recording the round left it, without reading it again: that holds every event ordered before the round.
      const checked = kept ?? (await this.breaker.checkToolCall(sessionId, { tool, args: call.args }, { freshSince: recording }));
      if (checked.action === 'stop') return { stop: toStop(checked, false), blocked: new Map() };
      if (kept === undefined && checked.action !== 'allow') escalated = true;
      judged.push({ tool, args: call.args, print, action: checked.action, message: checked.message });
      // A verdict on the round (budget wrap-up, token drift) applies to each of its calls.
      const decision = checked.action === 'allow' && (model.action === 'block' || model.action === 'steer') ? model : checked;
      if (decision.action === 'block') blocked.set(call.id, decision.message ?? 'repeated call refused.');
      else {
        if (decision.action === 'steer' && decision.message !== undefined) steers.push(decision.message);
        // The print remembered for the session: a replica with the note and this one observe the output alike.
        if (noted !== undefined && print !== undefined) noted.push([call.id, tool, print]);
      }
    }
    const keptFor = escalated ? request?.key : undefined;
    // The steers wait in the inbox, where the session's next request finds them on any replica; sent with the notes, in one round trip.
    await Promise.all([
      noted === undefined ? undefined : this.#noteCalls(sessionId, round.responseId!, noted),
      keptFor === undefined
        ? undefined
        : this.#judged.put(
            sessionId,
            keptFor,
            judged.map(({ tool, args, print, action, message }) => ({ print: print ?? this.breaker.printToolCall({ tool, args }), action, message })),
          ),
      this.#inbox.add(sessionId, [...steers, ...this.breaker.takeSteers(sessionId)]),
    ]);
    return { blocked };
  }

  /**
   * Tells every replica sharing the store the calls of the session's latest
   * response, as prints (never their arguments): the request that brings
   * their outputs may go to another replica and, continuing the response,
   * not hold the calls.
   */
  async #noteCalls(sessionId: string, responseId: string, calls: readonly (readonly [string, string, string])[]): Promise<void> {
    const { store } = this.breaker.options;
    if (calls.length === 0 || calls.length > MAX_NOTED_CALLS) return;
    // A store outage must not fail the agent's request: this process still knows them.
    await store.putNote?.(sessionId, CALLS_NOTE, JSON.stringify({ response: responseId, calls })).catch(() => undefined);
  }

  /** The calls of the session's latest response as a replica noted them, if the store keeps notes and has one. */
  async #notedCalls(sessionId: string): Promise<LastCalls | undefined> {
    const { store } = this.breaker.options;
    if (store.readNote === undefined) return undefined;
    const text = await store.readNote(sessionId, CALLS_NOTE).catch(() => undefined);
    return text === undefined ? undefined : parseNotedCalls(text);
  }
}

/** Takes the first of the verdicts kept for a call of that print, if any: each serves one call of the retry's answer. */
function takeVerdict(kept: CallVerdict[], print: string): CallVerdict | undefined {
  const at = kept.findIndex((verdict) => verdict.print === print);
  return at < 0 ? undefined : kept.splice(at, 1)[0];
}

/** The calls, unless the request continues another response than the one they belong to (another replica answered one since). */
function callsOf(latest: LastCalls | undefined, continued: string | undefined): ReadonlyMap<string, WireToolCall> | undefined {
  return latest === undefined || (continued !== undefined && continued !== latest.responseId) ? undefined : latest.calls;
}

/** A calls note as {@link ProxyJudge} writes it; anything else (another version's) counts as none. */
function parseNotedCalls(text: string): LastCalls | undefined {
  const note = parseCallsNote(text, 'response', 3, 3);
  if (note === undefined) return undefined;
  const byId = new Map<string, WireToolCall>();
  for (const [id, name, print] of note.calls as [string, string, string][]) byId.set(id, { id, name, args: undefined, print });
  return { responseId: note.head, calls: byId };
}
