import type { ExplainedStep, TripExplanation } from './trip-explanation.ts';

const ROLE_MARK: Record<ExplainedStep['role'], string> = { trip: '>>', repeat: ' =', stop: 'XX', before: '  ', after: ' x' };

/** Longest value shown per cell of the side-by-side comparison in a terminal. */
const CELL = 120;

/**
 * A trip explanation for a terminal: the verdict, where the ladder would have
 * stopped and what that saved, the evidence, the steps around the trip (`>>`
 * the first intervention, `=` an earlier step like it, `XX` the stop, `x` a
 * step that would not have run) and the repeated steps field by field.
 */
export function formatTripExplanation(explanation: TripExplanation): string {
  const e = explanation;
  const lines: string[] = [];
  lines.push(`${e.id}: ${e.action} (${e.category}) at step ${e.step} of ${e.stepsTotal}`);
  lines.push(`  ${e.reason}`);
  if (e.stop === undefined) {
    lines.push('Not stopped under the configured ladder: the agent runs on under the steer, nothing saved');
  } else {
    const tokens = e.tokensSaved === undefined ? 'tokens unknown' : `${e.tokensSaved.toLocaleString('en-US')} tokens`;
    lines.push(`Stopped at step ${e.stop.step} (${e.stop.category}); saved: ${e.stepsSaved} step${e.stepsSaved === 1 ? '' : 's'}, ${tokens}`);
  }
  if (e.message) lines.push(`Message to the model: ${e.message}`);
  if (e.evidence) {
    lines.push('Evidence:');
    for (const line of e.evidence.split('\n')) lines.push(`  ${line}`);
  }
  lines.push('', 'Steps:');
  const width = String(Math.max(0, ...e.steps.map((s) => s.index))).length;
  for (const step of e.steps) {
    lines.push(`${ROLE_MARK[step.role]} ${String(step.index).padStart(width)} ${step.kind.padEnd(10)} ${step.summary}`);
    if (step.outcome !== undefined) lines.push(`   ${' '.repeat(width)} ${''.padEnd(10)} ${step.error ? '!! ' : '-> '}${step.outcome}`);
  }
  if (e.sideBySide) {
    lines.push('', `Side by side (steps ${e.sideBySide.steps.join(', ')}):`);
    for (const field of e.sideBySide.fields) {
      if (field.same) {
        lines.push(`  ${field.name}: same in all — ${cut(field.values[0] ?? '(absent)')}`);
      } else {
        lines.push(`  ${field.name}: differs`);
        for (const [i, value] of field.values.entries()) lines.push(`    step ${e.sideBySide?.steps[i]}: ${cut(value ?? '(absent)')}`);
      }
    }
  }
  return lines.join('\n');
}

function cut(text: string): string {
  return text.length > CELL ? `${text.slice(0, CELL)}…` : text;
}
