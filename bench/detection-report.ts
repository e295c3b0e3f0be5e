/**
 * The detection benchmark as text: the overall table, recall per loop
 * category, F1 and false-positive rate per source, and the goals checked
 * against the measured figures.
 */
import path from 'node:path';
import type { DetectionFigures } from './detection-metrics.ts';
import type { CrossValidationReport, Spread } from './cross-validation.ts';
import type { DetectionReport, DetectorReport } from './detection.ts';

/** The goals the breaker must reach (checked here, on the figures just measured). */
export const GOALS = {
  /** Highest false-positive rate allowed on productive trajectories. */
  maxFalsePositiveRate: 0.01,
  /** Median (intervention step − first_stuck_step) may not exceed this. */
  maxMedianLag: 1,
} as const;

function fixed(value: number | undefined, digits = 2): string {
  return value === undefined ? 'n/a' : value.toFixed(digits);
}

function percent(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}

function signed(value: number | undefined): string {
  if (value === undefined) return 'n/a';
  const text = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return value > 0 ? `+${text}` : text;
}

function tokens(value: number | undefined): string {
  return value === undefined ? 'unknown' : Math.round(value).toLocaleString('en-US');
}

/** Left-aligned first column, right-aligned figures. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(header.map((_, i) => '-'.repeat(widths[i] ?? 0))), ...rows.map(line)].join('\n');
}

function overallRow(name: string, f: DetectionFigures): string[] {
  return [
    name,
    String(f.truePositives),
    String(f.falsePositives),
    String(f.falseNegatives),
    String(f.trueNegatives),
    fixed(f.precision),
    fixed(f.recall),
    fixed(f.f1),
    percent(f.falsePositiveRate),
    signed(f.medianLag),
    signed(f.p90Lag),
    `${f.hardStops}/${f.stuck}`,
    tokens(f.tokensAfterStuck),
    tokens(f.tokensAfterStuckPerStuck),
  ];
}

function categoryTable(report: DetectionReport): string {
  const categories = Object.keys(report.baseline.byCategory);
  const header = ['Detector', ...categories.map((c) => `${c} (${report.baseline.byCategory[c]?.stuck ?? 0})`)];
  const rows = report.detectors.map((d) => [
    d.name,
    ...categories.map((c) => {
      const f = d.byCategory[c];
      return f === undefined ? 'n/a' : `${f.truePositives}/${f.stuck} ${signed(f.medianLag)}`;
    }),
  ]);
  return table(header, rows);
}

function sourceTable(report: DetectionReport): string {
  const sources = Object.keys(report.baseline.bySource);
  const header = [
    'Detector',
    ...sources.map((s) => {
      const f = report.baseline.bySource[s];
      return `${s} (${f?.stuck ?? 0}/${f?.trajectories ?? 0})`;
    }),
  ];
  const rows = report.detectors.map((d) => [
    d.name,
    ...sources.map((s) => {
      const f = d.bySource[s];
      return f === undefined ? 'n/a' : `F1 ${fixed(f.f1)} FPR ${percent(f.falsePositiveRate)}`;
    }),
  ]);
  return table(header, rows);
}

/** The peer with the highest `f1` (an undefined F1 ranks below every figure); the first wins ties. */
function bestPeer(peers: readonly DetectorReport[], f1: (peer: DetectorReport) => number | undefined): DetectorReport | undefined {
  let best: DetectorReport | undefined;
  for (const p of peers) if ((f1(p) ?? -1) > (best === undefined ? -1 : (f1(best) ?? -1))) best = p;
  return best;
}

/**
 * One row per source, ours against the best peer there: stuck runs, our
 * recall (loops caught), false alarms, F1, and the peer with the best F1 on
 * that source.
 */
function sourceSummary(report: DetectionReport): string {
  const [ours, ...peers] = report.detectors;
  if (ours === undefined) return '';
  const header = ['Source', 'Stuck', `${ours.name}: recall`, 'False alarms', 'F1', 'Best peer rule', 'Peer recall', 'Peer F1'];
  const rows = Object.keys(report.baseline.bySource).map((source) => {
    const f = ours.bySource[source];
    const best = bestPeer(peers, (p) => p.bySource[source]?.f1);
    const b = best?.bySource[source];
    return [
      source,
      `${f?.stuck ?? 0}/${f?.trajectories ?? 0}`,
      `${fixed(f?.recall)} (${f?.truePositives ?? 0})`,
      `${f?.falsePositives ?? 0} of ${f?.productive ?? 0}`,
      fixed(f?.f1),
      b === undefined || (b.f1 ?? 0) === 0 ? '-' : (best?.name ?? '-'),
      fixed(b?.recall),
      fixed(b?.f1),
    ];
  });
  return table(header, rows);
}

/** F1 and false-alarm rate on the runs of each label confidence; empty when the corpus gives none. */
function confidenceTable(report: DetectionReport): string {
  const levels = Object.keys(report.baseline.byConfidence);
  if (levels.length === 0) return '';
  const header = [
    'Detector',
    ...levels.map((c) => {
      const f = report.baseline.byConfidence[c];
      return `${c} labels (${f?.stuck ?? 0}/${f?.trajectories ?? 0})`;
    }),
  ];
  const rows = report.detectors.map((d) => [
    d.name,
    ...levels.map((c) => {
      const f = d.byConfidence[c];
      return f === undefined ? 'n/a' : `F1 ${fixed(f.f1)} FPR ${percent(f.falsePositiveRate)}`;
    }),
  ]);
  return table(header, rows);
}

/** Each goal with the figure that meets it or not. The first detector is ours; the rest are peers. */
function goalLines(report: DetectionReport): string[] {
  const [ours, ...peers] = report.detectors as [DetectorReport, ...DetectorReport[]];
  if (ours === undefined) return [];
  const o = ours.overall;
  const best = bestPeer(peers, (p) => p.overall.f1);
  const mark = (ok: boolean): string => (ok ? 'met' : 'NOT MET');
  const lines: string[] = [];
  if (best !== undefined) {
    const ok = (o.f1 ?? 0) > (best.overall.f1 ?? 0);
    lines.push(`F1 above every peer: ${mark(ok)} (${fixed(o.f1)} vs ${fixed(best.overall.f1)}, ${best.name})`);
  }
  if (o.falsePositiveRate !== undefined) {
    const ok = o.falsePositiveRate <= GOALS.maxFalsePositiveRate;
    lines.push(
      `False-positive rate <= ${percent(GOALS.maxFalsePositiveRate)}: ${mark(ok)} (${percent(o.falsePositiveRate)}, ` +
        `${o.falsePositives} of ${o.productive} productive)`,
    );
  }
  if (o.medianLag !== undefined) {
    const ok = o.medianLag <= GOALS.maxMedianLag;
    lines.push(`Median trip no later than +${GOALS.maxMedianLag} step: ${mark(ok)} (${signed(o.medianLag)})`);
  }
  return lines.map((l) => `  ${ours.name}: ${l}`);
}

/** The whole report as text. */
export function formatDetectionReport(report: DetectionReport): string {
  const header = [
    'Detector',
    'TP',
    'FP',
    'FN',
    'TN',
    'Precision',
    'Recall',
    'F1',
    'FPR',
    'Lag med',
    'Lag p90',
    'Hard stops',
    'Tokens after stuck',
    'per stuck run',
  ];
  const rows = [...report.detectors, report.baseline].map((d) => overallRow(d.name, d.overall));
  const files = report.corpora.map((c) => path.basename(c)).join(', ');
  return [
    `Detection benchmark — ${files}: ${report.trajectories} labelled trajectories ` +
      `(${report.stuck} stuck, ${report.productive} productive` +
      `${report.unlabelled ? `, ${report.unlabelled} unlabelled skipped` : ''}` +
      `${report.malformedLines ? `, ${report.malformedLines} malformed lines` : ''})`,
    '',
    table(header, rows),
    '',
    'Recall by loop category (caught/stuck, median lag):',
    '',
    categoryTable(report),
    '',
    ...(Object.keys(report.baseline.byConfidence).length > 0 ? ['By label confidence (stuck/total in the header):', '', confidenceTable(report), ''] : []),
    'By source, ours against the best peer rule there:',
    '',
    sourceSummary(report),
    '',
    'By source (stuck/total in the header):',
    '',
    sourceTable(report),
    '',
    'Goals:',
    ...goalLines(report),
    '',
    'A detector trips at its first intervention (steer, block or stop). FPR: share of productive runs interrupted.',
    'Lag: intervention step − first_stuck_step over caught loops (negative = before the labelled step). Hard stops:',
    'loops ended by a `stop` even if every steer and block were ignored (peers stop at once). Tokens after stuck:',
    'prompt + completion tokens of model steps from first_stuck_step until the intervention, or to the end of a missed',
    'loop, summed over stuck runs ("unknown" when the corpus records no token counts).',
  ].join('\n');
}

function spreadText(s: Spread | undefined, format: (x: number) => string): string {
  return s === undefined ? 'n/a' : `${format(s.min)}–${format(s.max)} (mean ${format(s.mean)}, sd ${format(s.sd)})`;
}

/** The cross-validation as text: one row per held-out source, then the spread. */
export function formatCrossValidation(report: CrossValidationReport): string {
  const files = report.corpora.map((c) => path.basename(c)).join(', ');
  const header = ['Held-out source', 'Stuck', 'Defaults: recall', 'F1', 'FPR', 'Chosen on the other sources', 'Recall', 'F1', 'FPR'];
  const rows = report.sources.map((s) => [
    s.source,
    `${s.defaults.stuck}/${s.defaults.trajectories}`,
    fixed(s.defaults.recall),
    fixed(s.defaults.f1),
    percent(s.defaults.falsePositiveRate),
    s.chosen,
    fixed(s.chosenHeldOut.recall),
    fixed(s.chosenHeldOut.f1),
    percent(s.chosenHeldOut.falsePositiveRate),
  ]);
  const f2 = (x: number) => x.toFixed(2);
  return [
    `Cross-validation by source — ${files}: each source held out in turn; ${report.candidates} candidate configurations,`,
    `the one with the best F1 at FPR <= ${percent(report.maxFalsePositiveRate)} on the other sources is judged on the held-out one.`,
    '',
    table(header, rows),
    '',
    'Spread over held-out sources (F1: sources with stuck runs; FPR: sources with productive runs):',
    `  defaults: F1 ${spreadText(report.spread.defaults.f1, f2)}; FPR ${spreadText(report.spread.defaults.falsePositiveRate, percent)}`,
    `  chosen on the other sources: F1 ${spreadText(report.spread.chosen.f1, f2)}; FPR ${spreadText(report.spread.chosen.falsePositiveRate, percent)}`,
  ].join('\n');
}
