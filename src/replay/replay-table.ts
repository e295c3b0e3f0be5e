import { redact } from '../redaction/redact.ts';
import type { ReplayResult } from './replay.ts';
import { formatCount } from './replay-summary.ts';

const COLUMNS: ReadonlyArray<readonly [string, number]> = [
  ['STEPS', 6],
  ['TRIPPED', 7],
  ['CATEGORY', 15],
  ['STEP', 8],
  ['SAVED', 30],
  ['ID', 0],
];

/**
 * Fixed column widths: rows are printed as trajectories stream in, long
 * before the widest value of the file is known. The id comes last and whole:
 * ids of one file often differ only somewhere in the middle.
 */
export function formatTableHeader(): string {
  return COLUMNS.map(([name, width]) => name.padEnd(width))
    .join('  ')
    .trimEnd();
}

/**
 * One table row for one replayed trajectory. The step is where the first
 * intervention happened as `--explain` says it: a number for a step judged
 * before it ran, `after N` when the breaker decided on seeing step N (`--json`
 * names the next step then).
 */
export function formatTableRow(result: ReplayResult): string {
  const out = result.output;
  const tripped = out.tripped && out.step !== undefined;
  let saved = '-';
  if (tripped && out.stop_step === undefined) saved = 'none (steered only)';
  else if (tripped) {
    const steps = Math.max(0, out.steps_total - (out.stop_step ?? 0));
    const tokens = result.tokensKnown ? `${formatCount(out.tokens_after_trip)} tokens` : 'tokens unknown';
    saved = `${steps} step${steps === 1 ? '' : 's'}, ${tokens}`;
  }
  const cells = [
    String(out.steps_total),
    tripped ? 'yes' : 'no',
    tripped ? (out.category ?? 'other') : '-',
    tripped ? firstStep(result) : '-',
    saved,
    redact(out.id),
  ];
  return cells
    .map((cell, i) => cell.padEnd(COLUMNS[i]?.[1] ?? 0))
    .join('  ')
    .trimEnd();
}

function firstStep(result: ReplayResult): string {
  const first = result.interventions[0];
  return first?.observed === true ? `after ${first.step - 1}` : String(result.output.step);
}
