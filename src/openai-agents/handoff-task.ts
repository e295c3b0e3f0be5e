// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> (its generics are invariant); these mirror them so any agent fits.
import { getHandoff, type Agent, type AgentInputItem } from '@openai/agents';
import { resultText } from '../breaker/door-session.ts';

/** The tool names of an agent's handoffs, by agent: the SDK builds a handoff object for each name it is asked for. */
const namesByAgent = new WeakMap<Agent<any, any>, readonly string[]>();

/** The names of the tools through which `agent` hands off (`transfer_to_…`, or a handoff's own name). */
function handoffToolNames(agent: Agent<any, any>): readonly string[] {
  let names = namesByAgent.get(agent);
  if (names === undefined) {
    names = agent.handoffs.map((next) => getHandoff(next as Agent<any, any>).toolName);
    namesByAgent.set(agent, names);
  }
  return names;
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'text' in value && typeof value.text === 'string') return value.text;
  return resultText(value);
}

/**
 * What a handoff hands over, as the task the breaker judges it by: the
 * handoff call's arguments (a handoff with an `inputType`), what the
 * handing agent said in the turn that made it, and the newest tool result
 * before it that is not a handoff's own (in a back-and-forth, what the
 * receiving agent's last stint brought). A handoff repeated with nothing
 * new in any of these is the same task again; one that hands over another
 * item, or follows new work, is not. `input` and `output`: the handing
 * agent's last model turn.
 */
export function handoffTask(input: readonly AgentInputItem[], output: readonly AgentInputItem[], from: Agent<any, any>, to: Agent<any, any>): string {
  const names = new Set([...handoffToolNames(from), ...handoffToolNames(to)]);
  const conversation = [...input, ...output];
  const handoffCalls = new Set<string>();
  let args = '';
  for (const item of conversation) {
    if (item.type !== 'function_call' || !names.has(item.name)) continue;
    handoffCalls.add(item.callId);
    if (output.includes(item)) args = item.arguments;
  }
  let said = '';
  for (const item of output) {
    if (!('role' in item) || item.role !== 'assistant' || !Array.isArray(item.content)) continue;
    for (const part of item.content) if (part.type === 'output_text') said += part.text;
  }
  let brought = '';
  for (let i = conversation.length - 1; i >= 0; i--) {
    const item = conversation[i]!;
    if (item.type === 'function_call_result' && !handoffCalls.has(item.callId)) {
      brought = textOf(item.output);
      break;
    }
  }
  return [args, said.trim(), brought].filter((part) => part !== '' && part !== '{}').join('\n');
}
