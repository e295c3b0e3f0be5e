import { describePlace, type ExplainedIntervention, type ExplainedStep, type TripExplanation } from './trip-explanation.ts';

const ROLE_MARK: Record<ExplainedStep['role'], string> = { trip: '>>', intervention: '>>', repeat: ' =', stop: 'XX', before: '  ', after: ' x' };

/** Longest value shown per cell of the side-by-side comparison in a terminal. */
const CELL = 120;

/**
 * A trip explanation for a terminal: the verdict, where the ladder would have
 * stopped and what that saved, each intervention with its evidence, the steps
 * around them (`>>` an intervention, `=` an earlier step like the first one,
 * `XX` the stop, `x` a step that would not have run, `…` steps left out) and
 * the steps like the first intervention's field by field.
 */
export function formatTripExplanation(explanation: TripExplanation): string {
  const e = explanation;
  const lines: string[] = [];
  lines.push(`${e.id}: ${e.action} (${e.category}) ${describePlace(e.place)} of ${e.stepsTotal}`);
  if (e.stop === undefined) {
    lines.push('Not stopped under the configured ladder: the agent runs on under the steer, nothing saved');
  } else {
    const tokens = e.tokensSaved === undefined ? 'tokens unknown' : `${e.tokensSaved.toLocaleString('en-US')} tokens`;
    const place = describePlace(e.stop.place);
    lines.push(`Stopped ${place} (${e.stop.category}); saved: ${e.stepsSaved} step${e.stepsSaved === 1 ? '' : 's'}, ${tokens}`);
  }
  let previous = 0;
  for (const intervention of e.interventions) {
    const skipped = intervention.ordinal - previous - 1;
    if (skipped > 0) lines.push('', `… ${skipped} more intervention${skipped === 1 ? '' : 's'}, not shown …`);
    previous = intervention.ordinal;
    lines.push('', ...interventionLines(intervention, e.interventionCount));
  }
  lines.push('', 'Steps:');
  const width = String(Math.max(0, ...e.steps.map((s) => s.index))).length;
  let next = 0;
  const gap = (upTo: number): void => {
    const left = upTo - next;
    if (left > 0) lines.push(`   ${' '.repeat(width)} … ${left} step${left === 1 ? '' : 's'} …`);
  };
  for (const step of e.steps) {
    gap(step.index);
    next = step.index + 1;
    lines.push(`${ROLE_MARK[step.role]} ${String(step.index).padStart(width)} ${step.kind.padEnd(10)} ${step.summary}`);
    if (step.outcome !== undefined) lines.push(`   ${' '.repeat(width)} ${''.padEnd(10)} ${step.error ? '!! ' : '-> '}${step.outcome}`);
  }
  gap(e.stepsTotal);
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

function interventionLines(x: ExplainedIntervention, count: number): string[] {
  const lines = [`Intervention ${x.ordinal} of ${count}: ${x.action} (${x.category}) ${describePlace(x.place)}`, `  ${x.reason}`];
  if (x.message) lines.push(`  Message to the model: ${x.message}`);
  if (x.evidence) {
    lines.push('  Evidence:');
    for (const line of x.evidence.split('\n')) lines.push(`    ${line}`);
  }
  return lines;
}

function cut(text: string): string {
  return text.length > CELL ? `${text.slice(0, CELL)}…` : text;
}
