// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> (its generics are invariant); these mirror them so any agent fits.
import { RunContext, RunState, type Agent, type AgentInputItem, type ModelResponse } from '@openai/agents';
import type { ObservingBreaker } from '../breaker/ai-sdk-adapter.ts';
import type { BreakerDecision } from '../breaker/breaker-decision.ts';
import { DoorSession } from '../breaker/door-session.ts';

/** The SDK's default `maxTurns` (its `DEFAULT_MAX_TURNS`, which it does not export). */
const SDK_DEFAULT_MAX_TURNS = 10;

/** How many tool calls' throws a session keeps waiting for their results (far more than a turn runs side by side). */
const REMEMBERED_THROWS = 256;

/** What a governed run was started with, which a rebuilt state needs. */
export interface RunStart {
  readonly agent: Agent<any, any>;
  /** The run's `context` option (the SDK wraps it in a `RunContext`). */
  readonly context: unknown;
  readonly maxTurns: number | undefined;
  /** Keeps a state handed out with a stop under the run's session, so resuming it (as is, or saved and restored) goes on in that session. */
  readonly adopt: (state: RunState<any, Agent<any, any>>) => void;
}

/**
 * One run's session plus the observations still in flight (run hooks cannot
 * be awaited by the SDK), and what it knows of the run, so that its stop
 * error carries the run's state as the SDK's own errors do
 * (`MaxTurnsExceededError.state`): the SDK throws the stop out of a model call
 * without attaching its state, and only hands the state out with a result.
 */
/** One model turn: what the model was sent, and what it answered. */
interface ModelTurn {
  readonly input: readonly AgentInputItem[];
  readonly output: readonly AgentInputItem[];
}

export class RunSession extends DoorSession {
  #pending: Promise<unknown> = Promise.resolve();
  readonly #start: RunStart | undefined;
  /** The run's own state, once the SDK has handed it out (a resumed state, a result's). */
  runState: RunState<any, Agent<any, any>> | undefined;
  #agent: Agent<any, any> | undefined;
  /** The name of the agent whose turn it is, whether or not the run's state is kept. */
  #agentName: string | undefined;
  /** Steers decided on a handoff, by the agent that handed off, for its next turn. */
  readonly #heldFor = new Map<string, string[]>();
  #context: RunContext<any> | undefined;
  /** What the model was last sent, with its answer once that was recorded. */
  #conversation: AgentInputItem[] | undefined;
  /** The last model turn of the session: where a handoff's task is read (see `handoffTask`). */
  #lastTurn: ModelTurn | undefined;
  /** The model's answers in this run, in order (a run the SDK hands no state out of). */
  readonly #responses: ModelResponse[] = [];
  /** What calls of `governed.tool` tools threw, by call id, until their results are recorded. */
  readonly #thrown = new Map<string, string>();

  constructor(breaker: ObservingBreaker, sessionId: string, start?: RunStart) {
    super(breaker, sessionId);
    this.#start = start;
    this.#agent = start?.agent;
  }

  /**
   * Keeps the steer decided on a handoff for the agent that handed off, to
   * go with that agent's next model turn rather than the next turn, which is
   * the receiving agent's: "you have given billing this task 3 times" is
   * for triage. Other steers waiting stay for the next turn.
   */
  holdSteerFor(agent: string, decision: BreakerDecision): void {
    if ((decision.action !== 'steer' && decision.action !== 'block') || !decision.message) return;
    // A breaker that queues its own steers has queued this one for the next turn: taken back from there.
    const waiting = super.takeSteers();
    this.returnSteers(waiting.filter((message) => message !== decision.message));
    const held = this.#heldFor.get(agent);
    if (held === undefined) this.#heldFor.set(agent, [decision.message]);
    else held.push(decision.message);
  }

  /** {@link DoorSession.takeSteers}, with the steers held for the agent whose turn it is (see `holdSteerFor`). */
  override takeSteers(): string[] {
    const held = this.#agentName === undefined ? undefined : this.#heldFor.get(this.#agentName);
    if (held !== undefined) this.#heldFor.delete(this.#agentName!);
    return [...super.takeSteers(), ...(held ?? [])];
  }

  track(work: Promise<unknown>): void {
    this.#pending = this.#pending.then(() => work);
  }

  settle(): Promise<unknown> {
    return this.#pending;
  }

  /** The agent that now runs, with the run's context (the runner's `agent_start`). */
  noteAgent(context: RunContext<any>, agent: Agent<any, any>): void {
    this.#agentName = agent.name;
    if (this.#start === undefined) return;
    this.#context = context;
    this.#agent = agent;
  }

  /** What a model turn is sent (and, once recorded, what it answered). */
  noteConversation(input: string | AgentInputItem[], output?: ModelResponse['output']): void {
    const sent: AgentInputItem[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
    const answer = output as AgentInputItem[] | undefined;
    if (answer !== undefined) this.#lastTurn = { input: sent, output: answer };
    if (this.#start === undefined) return;
    this.#conversation = answer === undefined ? sent : [...sent, ...answer];
  }

  /** The session's last model turn (see {@link noteConversation}). */
  get lastTurn(): ModelTurn | undefined {
    return this.#lastTurn;
  }

  /** A model answer the SDK will keep in the run's state (`rawResponses`), which a rebuilt state keeps too. */
  noteResponse(response: ModelResponse): void {
    if (this.#start === undefined) return;
    this.#responses.push(response);
  }

  /**
   * Keeps what a tool call threw for its result's record. Bounded: a call
   * whose result is never recorded (a tool whose `errorFunction` is `null`
   * fails the run instead) must not be kept for the session's whole life.
   */
  noteThrown(callId: string, message: string): void {
    this.#thrown.set(callId, message);
    if (this.#thrown.size > REMEMBERED_THROWS) this.#thrown.delete(this.#thrown.keys().next().value as string);
  }

  /** What a tool call threw, if it threw, forgotten once read. */
  takeThrown(callId: string): string | undefined {
    const message = this.#thrown.get(callId);
    this.#thrown.delete(callId);
    return message;
  }

  protected override onStop(error: Error): void {
    const start = this.#start;
    if (start === undefined) return;
    let rebuilt: RunState<any, Agent<any, any>> | undefined;
    // Read when the caller asks: the SDK hands a streamed run's state out after the stop may be decided.
    // Not enumerable, as a run's whole conversation should not land in a log that prints the error's fields.
    Object.defineProperty(error, 'state', {
      configurable: true,
      enumerable: false,
      get: () => {
        if (this.runState !== undefined) return this.runState;
        if (rebuilt === undefined && this.#agent !== undefined && this.#conversation !== undefined) {
          const context = this.#context ?? (start.context instanceof RunContext ? start.context : new RunContext(start.context));
          rebuilt = new RunState(context, this.#conversation, this.#agent, start.maxTurns ?? SDK_DEFAULT_MAX_TURNS);
          // As the SDK's own state would have them: a saved state records its session in its responses.
          rebuilt._modelResponses = [...this.#responses];
          start.adopt(rebuilt);
        }
        return rebuilt;
      },
    });
  }
}
