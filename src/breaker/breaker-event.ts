/**
 * What the breaker observes. The kinds mirror the steps of the trajectory
 * format (`model`, `tool_call`, `retrieval`, `delegation`, `user`) so that a
 * live session and a recorded one are judged by the same code.
 */
export type BreakerEvent = ModelEvent | ToolCallEvent | RetrievalEvent | DelegationEvent | UserEvent;

/** One model round trip. Token counts are `null` when the provider did not report them. */
export interface ModelEvent {
  readonly kind: 'model';
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  /** The model's own text of this round (may be empty). */
  readonly text: string;
  /** Cost of this round in USD, when prices are known. */
  readonly costUsd?: number;
  /**
   * Tokens the round spent in all, when it took more model calls than the
   * one `promptTokens` and `completionTokens` count (the re-asks of a
   * validation advisor beneath the breaker): the budget counts this instead of
   * their sum, while token drift keeps reading `promptTokens`.
   */
  readonly spentTokens?: number;
  /**
   * The id of the model that answered (`gpt-4o`, `claude-sonnet-4-5`): a round
   * without `costUsd` is priced from it and its token counts with the default
   * price table, so `budget.maxCostUsd` holds at doors that do not price rounds
   * themselves; a model the table does not know makes the cost budget
   * `not_enforceable` in `health()`, with a warning.
   */
  readonly model?: string;
  /**
   * The round is a sub-agent's: one run inside a governed tool call of the
   * same session (the `ChatClient` and the AI SDK, LangChain and Agents SDK
   * doors set it themselves there). It counts for the budget and the counters
   * like any round, but its prompt is the sub-agent's own, small context:
   * token drift follows it apart from the session's own rounds, whose growth
   * a delegation between them then neither advances nor restarts.
   */
  readonly delegated?: boolean;
}

/** One executed tool call, with its result. */
export interface ToolCallEvent {
  readonly kind: 'tool_call';
  readonly tool: string;
  /** Parsed JSON arguments, raw JSON text, or free text. Left out (or `null`) when `print` stands for them. */
  readonly args?: unknown;
  /**
   * The call's print (see `AgentBreaker.printToolCall`) in place of its
   * arguments: a process that never saw the arguments (another replica)
   * observes the call exactly as one that did. Pass `args` or `print`, not both.
   */
  readonly print?: string;
  readonly result: string | null;
  readonly error?: boolean;
}

/** One retrieval (vector store / retriever) query and the ids or texts it returned. */
export interface RetrievalEvent {
  readonly kind: 'retrieval';
  readonly query: string;
  readonly results?: readonly string[];
}

/** One call of a sub-agent. */
export interface DelegationEvent {
  readonly kind: 'delegation';
  readonly agent: string;
  readonly input: string;
  readonly output: string;
}

/** A user turn or an outside event the agent did not cause: new information. */
export interface UserEvent {
  readonly kind: 'user';
  readonly text: string;
}

/** A tool call the model asked for, judged before it runs. */
export interface ProposedToolCall {
  readonly tool: string;
  readonly args: unknown;
}
