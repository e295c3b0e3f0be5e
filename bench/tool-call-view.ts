/**
 * A trajectory as a framework that has only tool calls records it. In Gemini
 * CLI, Roo Code / Cline and OpenHands a search of a knowledge base is a call of
 * a search tool, and a sub-agent is a tool too (a `task` or delegate tool);
 * their loop rules see those calls and compare them like any other. Peers
 * replayed on this view judge retrieval and delegation steps as they would in
 * their own framework, rather than not seeing them at all.
 */
import type { ToolCallStep, Trajectory, TrajectoryStep } from '../src/replay/trajectory.ts';

/** Name of the tool a retrieval step becomes. */
export const RETRIEVAL_TOOL = 'search';

/** The step as a tool call: retrieval and delegation become calls of a search tool and of the sub-agent's tool. */
function asToolCallStep(step: TrajectoryStep): TrajectoryStep {
  switch (step.kind) {
    case 'retrieval': {
      const call: ToolCallStep = {
        kind: 'tool_call',
        tool: RETRIEVAL_TOOL,
        args: { query: step.query },
        result: step.results === undefined ? null : step.results.join('\n\n'),
      };
      return call;
    }
    case 'delegation':
      return { kind: 'tool_call', tool: step.agent, args: { task: step.input }, result: step.output };
    default:
      return step;
  }
}

/** The trajectory with every retrieval and delegation step as a tool call; the same object when it has none. */
export function asToolCalls(trajectory: Trajectory): Trajectory {
  if (!trajectory.steps.some((s) => s.kind === 'retrieval' || s.kind === 'delegation')) return trajectory;
  return { ...trajectory, steps: trajectory.steps.map(asToolCallStep) };
}
