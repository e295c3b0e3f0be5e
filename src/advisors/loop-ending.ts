import type { AdvisorContext } from '../chat/advisor-context.ts';
import type { GovernedTool } from '../chat/chat-client-request.ts';

/**
 * Advisor param: names of tools that end the tool loop once they have run, as
 * if each were declared with `endsLoop: true` (see `ToolCallingAdvisor`).
 * `AgentLoop` sets it to its finish tool.
 */
export const LOOP_ENDING_TOOLS = 'governor.toolLoop.endingTools';

/** One call of a round, as far as ending the tool loop goes. */
export interface RoundCall {
  /** The called tool, when the request has one of that name. */
  readonly tool: GovernedTool | undefined;
  readonly toolName: string;
  /** It ran without error (a refused, denied, failed or unanswered call did not). */
  readonly ran: boolean;
}

/** The tool names a request's {@link LOOP_ENDING_TOOLS} param marks as loop-ending. */
export function loopEndingNames(context: AdvisorContext): ReadonlySet<string> {
  const named = context.get(LOOP_ENDING_TOOLS);
  return new Set(Array.isArray(named) ? named.filter((name): name is string => typeof name === 'string') : []);
}

/**
 * The calls of a round whose outputs end the tool loop, or undefined when the
 * loop goes on: every call when each is of a `returnDirect` tool that ran,
 * else those of loop-ending tools (`endsLoop`, or named in `endingNames`) that
 * ran. The tool loop ends a round by it, and the memory advisors judge by it
 * whether a stored round was the end of its turn.
 */
export function loopEndingCalls<T extends RoundCall>(round: readonly T[], endingNames: ReadonlySet<string>): readonly T[] | undefined {
  if (round.length > 0 && round.every((call) => call.ran && call.tool?.returnDirect === true)) return round;
  const ending = round.filter((call) => call.ran && call.tool !== undefined && (call.tool.endsLoop === true || endingNames.has(call.toolName)));
  return ending.length > 0 ? ending : undefined;
}
