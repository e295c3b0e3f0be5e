/**
 * Metamorphic checks of the breaker's verdicts: rewrites of a recorded run
 * that a real rerun, another tool or another framework would produce, and
 * that leave whether (and where) the run loops as it was. A verdict that
 * moves under one of them is a rule fitted to one tool's wording or to one
 * run's values, not to the loop.
 */
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import { replayTrajectory } from '../src/replay/replay.ts';
import type { Trajectory, TrajectoryStep } from '../src/replay/trajectory.ts';

/** A rewrite of one run; `random` is seeded per run, so a check is repeatable. */
export type Rewrite = (run: Trajectory, random: () => number) => Trajectory;

/** `rewrite` applied to every tool result and, unless `toolsOnly`, every retrieved passage. */
function mapResults(run: Trajectory, rewrite: (text: string) => string, toolsOnly = false): Trajectory {
  const steps = run.steps.map((step): TrajectoryStep => {
    if (step.kind === 'tool_call' && step.result !== null) return { ...step, result: rewrite(step.result) };
    if (step.kind === 'retrieval' && step.results !== undefined && !toolsOnly) return { ...step, results: step.results.map(rewrite) };
    return step;
  });
  return { ...run, steps };
}

function hex(random: () => number, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(random() * 16).toString(16);
  // Letters and digits both, as a generated id has.
  return `${Math.floor(random() * 10)}${out.slice(1, -1)}${'abcdef'[Math.floor(random() * 6)]}`;
}

function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reorder(v)]),
  );
}

/** The rewrites, by name. */
export const REWRITES: Readonly<Record<string, Rewrite>> = {
  // Another search tool's wording of "nothing found", with the query echoed as before.
  'failed searches worded otherwise': (run) =>
    mapResults(run, (text) => text.replace(/^Could not find (\[[^\]\n]*\])\./, 'Search for $1 returned no results.')),
  // A framework that labels every output, as ReAct prompts do.
  'outputs labelled "Observation: "': (run) => mapResults(run, (text) => `Observation: ${text}`),
  // What a rerun of a tool names anew: a temporary directory, a process, a port, a timing, a container.
  'values a rerun changes': (run, random) =>
    mapResults(
      run,
      (text) =>
        `${text}\n[/tmp/tmp${hex(random, 8).replace(/[a-f]/g, 'k')} pid=${1000 + Math.floor(random() * 60_000)} http://127.0.0.1:${32768 + Math.floor(random() * 28_000)}/ real 0m${(random() * 9).toFixed(3)}s container ${hex(random, 12)}]`,
      true,
    ),
  // An MCP client's names for the same tools.
  'tools namespaced as an MCP client names them': (run) => ({
    ...run,
    steps: run.steps.map((step) => (step.kind === 'tool_call' ? { ...step, tool: `mcp__env__${step.tool}` } : step)),
  }),
  // The same arguments serialised in another key order, and Windows line endings in every output.
  'keys reordered, CRLF line endings': (run) => {
    const reordered = {
      ...run,
      steps: run.steps.map((step) =>
        step.kind === 'tool_call' && typeof step.args === 'object' ? { ...step, args: reorder(step.args) as Record<string, unknown> } : step,
      ),
    };
    return mapResults(reordered, (text) => text.replace(/\r?\n/g, '\r\n'));
  },
};

/** Where the breaker (defaults) first intervenes in a run, or `none`. */
export async function verdict(run: Trajectory): Promise<string> {
  const { output } = await replayTrajectory(new AgentBreaker({ telemetry: false }), run, run.id);
  return output.tripped ? `${output.category ?? ''}@${output.step ?? ''}` : 'none';
}

/** A seeded generator (mulberry32): the same values for the same run every time. */
export function seeded(text: string): () => number {
  let seed = 0;
  for (let i = 0; i < text.length; i++) seed = (Math.imul(seed, 31) + text.charCodeAt(i)) | 0;
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
