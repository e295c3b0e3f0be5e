import { redact } from '../redaction/redact.ts';
import { terminalText } from '../redaction/terminal-text.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { formatCount, type ReplaySummary, type TrippedTrajectory } from './replay-summary.ts';
import { describePlace, type ComparedField, type ExplainedIntervention, type ExplainedStep, type SideBySide } from './trip-explanation.ts';

/** Options of {@link renderHtmlReport}. */
export interface HtmlReportOptions {
  /** Name of the replayed file, shown in the title. */
  readonly source: string;
  /** Creation time printed in the footer. @default new Date() */
  readonly generatedAt?: Date;
}

const HTML_REPORT_RULES: OptionRules<HtmlReportOptions> = {
  source: is.string(),
  generatedAt: (value, path) => {
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw new InvalidOptionError(path, 'must be a valid Date');
  },
};

const PALETTE = ['#3867d6', '#eb3b5a', '#20bf6b', '#f7b731', '#8854d0', '#0fb9b1', '#fa8231', '#4b6584'];

/**
 * `text` as HTML text or attribute value. Bidirectional-text controls are shown
 * as `\u202e`-style escapes: a text that quotes one (a reason naming a tool)
 * cannot be isolated piece by piece, and one left raw would reorder the rest of it.
 */
function escapeHtml(text: string): string {
  return terminalText(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Text from a trajectory, escaped and isolated (`<bdi>`): whatever its direction,
 * it cannot reorder the report's own text around it.
 */
function data(text: string): string {
  return `<bdi>${escapeHtml(text)}</bdi>`;
}

interface Bar {
  readonly label: string;
  readonly value: number;
}

/**
 * A horizontal bar chart as inline SVG (no script, no external assets).
 * `unit` is [singular, plural]; `single` paints every bar one colour (for a
 * distribution rather than categories).
 */
function barChart(title: string, bars: readonly Bar[], unit: readonly [string, string], single = false, empty = 'Nothing tripped.'): string {
  if (bars.length === 0) {
    return `<figure><figcaption>${escapeHtml(title)}</figcaption><p class="empty">${escapeHtml(empty)}</p></figure>`;
  }
  const labelWidth = Math.min(220, 12 + 7.5 * Math.max(...bars.map((b) => b.label.length)));
  const plotWidth = 420;
  const valueWidth = 110;
  const rowHeight = 28;
  const width = labelWidth + plotWidth + valueWidth;
  const height = bars.length * rowHeight + 8;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rows = bars
    .map((bar, i) => {
      const y = 4 + i * rowHeight;
      const w = Math.max(bar.value > 0 ? 2 : 0, (plotWidth * bar.value) / max);
      const color = single ? '#3867d6' : (PALETTE[i % PALETTE.length] ?? '#3867d6');
      const label = `${formatCount(bar.value)} ${bar.value === 1 ? unit[0] : unit[1]}`;
      return (
        `<text x="${labelWidth - 8}" y="${y + 18}" text-anchor="end">${escapeHtml(bar.label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowHeight - 8}" rx="3" fill="${color}">` +
        `<title>${escapeHtml(`${bar.label}: ${label}`)}</title></rect>` +
        `<text x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 18}">${escapeHtml(label)}</text>`
      );
    })
    .join('');
  return (
    `<figure><figcaption>${escapeHtml(title)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">` +
    `${rows}</svg></figure>`
  );
}

/**
 * Where in their runs the listed runs had the step `stepOf` picks, in tenths of
 * the run; runs for which it picks none are left out.
 */
function positionBars(list: readonly TrippedTrajectory[], stepOf: (t: TrippedTrajectory) => number | undefined): Bar[] {
  const buckets = new Array<number>(10).fill(0);
  for (const t of list) {
    const step = stepOf(t);
    if (step === undefined) continue;
    const fraction = t.stepsTotal === 0 ? 1 : step / t.stepsTotal;
    const index = Math.min(9, Math.floor(fraction * 10));
    buckets[index] = (buckets[index] ?? 0) + 1;
  }
  return buckets.map((value, i) => ({ label: `${i * 10}–${i * 10 + 10}% of run`, value }));
}

/**
 * The two "where in the run" charts: where runs would have stopped (adds up to
 * the "would have stopped" figure) and where the breaker first intervened
 * (adds up to the "with an intervention" figure) — over the listed runs, which
 * the titles say when the list holds only the first of them.
 */
function positionCharts(summary: ReplaySummary): string {
  if (summary.tripped === 0) return '';
  const list = summary.trippedList;
  const listedStopped = list.filter((t) => t.stopStep !== undefined).length;
  const stopTitle =
    'Where runs would have stopped' +
    (listedStopped < summary.stopped
      ? ` (the ${formatCount(listedStopped)} of ${formatCount(summary.stopped)} among the first ${formatCount(list.length)} runs with an intervention)`
      : '');
  const firstTitle =
    'Where the breaker first intervened (steer, block or stop)' +
    (list.length < summary.tripped ? ` (first ${formatCount(list.length)} of ${formatCount(summary.tripped)} runs)` : '');
  return [
    barChart(
      stopTitle,
      listedStopped === 0 ? [] : positionBars(list, (t) => t.stopStep),
      ['run', 'runs'],
      true,
      summary.stopped === 0 ? 'No run would have stopped: the breaker only steered or blocked.' : 'None among the listed runs.',
    ),
    barChart(
      firstTitle,
      positionBars(list, (t) => t.step),
      ['run', 'runs'],
      true,
    ),
  ].join('\n');
}

/**
 * No script may run in the report, whatever a trajectory holds: everything from
 * it is escaped, and this policy refuses scripts and remote resources even if
 * escaping were ever missed.
 */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const ROLE_LABEL: Record<ExplainedStep['role'], string> = {
  trip: 'first intervention',
  intervention: 'intervention',
  stop: 'stop',
  repeat: 'like the trip',
  before: '',
  after: 'not run',
};

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().split(/\s+/).filter(Boolean));
}

/** A compared value with the words its predecessor lacked marked: what changed from one repeat to the next. */
function markChanges(value: string | undefined, previous: string | undefined): string {
  if (value === undefined) return '<span class="absent">(absent)</span>';
  if (previous === undefined || previous === value) return data(value);
  const before = words(previous);
  const marked = value
    .split(/(\s+)/)
    .map((part) => (part.trim() === '' || before.has(part.toLowerCase()) ? escapeHtml(part) : `<mark>${escapeHtml(part)}</mark>`))
    .join('');
  return `<bdi>${marked}</bdi>`;
}

function sideBySideTable(sideBySide: SideBySide): string {
  const head = sideBySide.steps.map((s) => `<th>step ${s}</th>`).join('');
  const row = (field: ComparedField): string => {
    const cells = field.values.map((v, i) => `<td>${markChanges(v, i === 0 ? undefined : field.values[i - 1])}</td>`).join('');
    return `<tr class="${field.same ? 'same' : 'differs'}"><th>${data(field.name)}<small>${field.same ? 'same' : 'differs'}</small></th>${cells}</tr>`;
  };
  return (
    '<h4>The repeated steps side by side</h4>' +
    `<table class="compare"><thead><tr><th>field</th>${head}</tr></thead><tbody>${sideBySide.fields.map(row).join('')}</tbody></table>`
  );
}

/** A row saying how many steps are left out before step `upTo`, if any. */
function gapRow(from: number, upTo: number): string {
  const left = upTo - from;
  return left > 0 ? `<tr class="gap"><td colspan="5">… ${formatCount(left)} step${left === 1 ? '' : 's'} …</td></tr>` : '';
}

function stepsTable(steps: readonly ExplainedStep[], stepsTotal: number): string {
  let next = 0;
  const rows = steps
    .map((s) => {
      const gap = gapRow(next, s.index);
      next = s.index + 1;
      return (
        `${gap}<tr class="role-${s.role}"><td>${s.index}</td><td>${escapeHtml(s.kind)}</td><td>${ROLE_LABEL[s.role]}</td>` +
        `<td class="text">${data(s.summary)}</td><td class="text${s.error ? ' error' : ''}">${data(s.outcome ?? '')}</td></tr>`
      );
    })
    .join('');
  return `<h4>Steps around the interventions</h4><table class="steps"><thead><tr><th>#</th><th>kind</th><th></th><th>step</th><th>outcome</th></tr></thead><tbody>${rows}${gapRow(next, stepsTotal)}</tbody></table>`;
}

/** Each intervention shown, in order, with a line where some are left out. */
function interventionList(interventions: readonly ExplainedIntervention[], count: number): string {
  let previous = 0;
  return interventions
    .map((x) => {
      const skipped = x.ordinal - previous - 1;
      previous = x.ordinal;
      return (
        (skipped > 0 ? `<p class="gap">… ${formatCount(skipped)} more intervention${skipped === 1 ? '' : 's'}, not shown …</p>` : '') +
        `<section class="intervention"><h4>Intervention ${x.ordinal} of ${count}: ${escapeHtml(x.action)} (${escapeHtml(x.category)}) ${describePlace(x.place)}</h4>` +
        `<div class="reason">${data(x.reason)}</div>` +
        (x.message ? `<p><b>Message to the model:</b> ${data(x.message)}</p>` : '') +
        (x.evidence ? `<pre>${data(x.evidence)}</pre>` : '') +
        '</section>'
      );
    })
    .join('\n');
}

function runDetails(t: TrippedTrajectory, categoryIndex: number): string {
  const e = t.explanation;
  // Without an explanation, the steps as --json numbers them.
  const first = e === undefined ? `step ${t.step}` : describePlace(e.place);
  const stopped = e?.stop === undefined ? `step ${t.stopStep}` : describePlace(e.stop.place);
  const saved =
    t.stopStep === undefined
      ? 'not stopped: nothing saved'
      : `stopped ${e?.stop === undefined ? 'at ' : ''}${stopped}, saves ${formatCount(t.stepsSaved)} step${t.stepsSaved === 1 ? '' : 's'}, ${
          t.tokensSaved === undefined ? 'tokens unknown' : `${formatCount(t.tokensSaved)} tokens`
        }`;
  const summary =
    `<summary><span class="line">line ${t.lineNumber}</span> <span class="id">${data(redact(t.id))}</span> ` +
    `<span class="tag">${escapeHtml(t.category)}</span> <span class="tag action">${escapeHtml(t.action)}</span> ` +
    `<span class="at">${first} / ${t.stepsTotal}</span> <span class="saved">${saved}</span>` +
    `<div class="reason">${data(redact(t.reason))}</div></summary>`;
  const parts: string[] = [];
  if (e) parts.push(interventionList(e.interventions, e.interventionCount));
  if (e?.sideBySide) parts.push(sideBySideTable(e.sideBySide));
  if (e) parts.push(stepsTable(e.steps, e.stepsTotal));
  if (!e) parts.push('<p class="empty">No step detail kept for this run.</p>');
  return `<details class="run c${categoryIndex}">${summary}<div class="body">${parts.join('\n')}</div></details>`;
}

/** Category filter as radio buttons and CSS alone (the page runs no script). */
function categoryFilter(categories: readonly (readonly [string, number])[]): { controls: string; css: string } {
  const controls = [
    `<input type="radio" name="category" id="c-all" checked><label for="c-all">all (${formatCount(categories.reduce((n, [, c]) => n + c, 0))})</label>`,
    ...categories.map(
      ([name, count], i) => `<input type="radio" name="category" id="c${i}"><label for="c${i}">${escapeHtml(name)} (${formatCount(count)})</label>`,
    ),
  ].join('\n');
  const css = categories.map((_, i) => `#c${i}:checked ~ .runs .run:not(.c${i}) { display: none; }`).join('\n');
  return { controls, css };
}

/**
 * A self-contained HTML page (inline CSS and SVG, no scripts, no external
 * assets, a content security policy that allows neither) summarising a replay:
 * headline figures, trips by category (of the first intervention), steps saved
 * by category (of the stop), where in the runs they would have stopped and
 * where the breaker first intervened, and every listed tripped run as a
 * drill-down — each intervention with the breaker's evidence, the steps around
 * them, the steps like the first one side by side with what changed marked,
 * and what stopping saved — with a filter by category. Everything taken from
 * the trajectories is escaped, redacted and isolated from the page's own text.
 */
export function renderHtmlReport(summary: ReplaySummary, options: HtmlReportOptions): string {
  validateOptions('renderHtmlReport', options, HTML_REPORT_RULES, { required: ['source'] });
  const generatedAt = options.generatedAt ?? new Date();
  const categories = [...summary.byCategory];
  const tokensLine =
    summary.trajectoriesWithTokens === 0
      ? 'unknown (the file has no token counts)'
      : `${formatCount(summary.tokensSaved)} of ${formatCount(summary.tokensTotal)}`;
  const shown = summary.trippedList.length;
  const listed = new Map<string, number>();
  for (const t of summary.trippedList) listed.set(t.category, (listed.get(t.category) ?? 0) + 1);
  const listedCategories = [...listed].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const indexOf = new Map(listedCategories.map(([name], i) => [name, i]));
  const filter = categoryFilter(listedCategories);
  const runs = summary.trippedList.map((t) => runDetails(t, indexOf.get(t.category) ?? 0)).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Governor replay — ${escapeHtml(redact(options.source))}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #1e272e; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
h4 { margin: 1rem 0 .4rem; }
.sub { color: #57606f; margin-top: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1.5rem 0; }
.card { border: 1px solid #d2dae2; border-radius: 8px; padding: .75rem 1rem; min-width: 150px; }
.card b { display: block; font-size: 1.4rem; }
figure { margin: 1.5rem 0; }
figcaption { font-weight: 600; margin-bottom: .5rem; }
svg text { font: 12px system-ui, sans-serif; fill: #1e272e; }
.empty, .absent { color: #57606f; }
.filter { margin: 1rem 0; }
.filter input { position: absolute; opacity: 0; }
.filter label { display: inline-block; margin: 0 .3rem .4rem 0; border: 1px solid #d2dae2; border-radius: 999px; padding: .15rem .7rem; cursor: pointer; }
.filter input:checked + label { background: #3867d6; border-color: #3867d6; color: #fff; }
.filter input:focus-visible + label { outline: 2px solid #1e272e; }
details.run { border: 1px solid #d2dae2; border-radius: 8px; margin: .5rem 0; }
details.run > summary { cursor: pointer; padding: .5rem .75rem; }
details.run[open] > summary { border-bottom: 1px solid #d2dae2; background: #f7f8fa; }
details.run .body { padding: .25rem .75rem .75rem; overflow-x: auto; }
.id { font-family: ui-monospace, monospace; word-break: break-all; }
.line, .saved { color: #57606f; }
.tag { background: #f1f2f6; border-radius: 4px; padding: 0 .35rem; }
.tag.action { background: #fff3cd; }
.reason { color: #2f3542; margin-top: .2rem; }
pre { background: #f7f8fa; padding: .5rem; border-radius: 4px; white-space: pre-wrap; word-break: break-word; font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #d2dae2; padding: .3rem .5rem; text-align: left; vertical-align: top; }
thead th { background: #f1f2f6; }
td, th { overflow-wrap: anywhere; }
table.steps { table-layout: fixed; }
table.steps th:nth-child(1) { width: 3rem; } table.steps th:nth-child(2) { width: 5.5rem; } table.steps th:nth-child(3) { width: 5rem; }
table.compare th:first-child { width: 10rem; }
td.error { color: #b71540; }
tr.role-trip, tr.role-intervention { background: #ffeaa7; }
tr.gap td, p.gap { color: #57606f; font-style: italic; }
section.intervention { border-left: 3px solid #f7b731; padding-left: .6rem; margin: .6rem 0; }
section.intervention h4 { margin-top: .2rem; }
tr.role-stop { background: #fab1a0; }
tr.role-repeat { background: #fff8e1; }
tr.role-after { color: #8395a7; }
table.compare th small { display: block; font-weight: normal; color: #57606f; }
table.compare tr.same td { color: #57606f; }
table.compare tr.differs th small { color: #b71540; }
mark { background: #c7ecee; }
footer { margin-top: 2rem; color: #57606f; font-size: 12px; }
${filter.css}
</style>
</head>
<body>
<h1>Governor replay report</h1>
<p class="sub">${data(redact(options.source))}</p>
<div class="cards">
<div class="card"><b>${formatCount(summary.trajectories)}</b>trajectories replayed</div>
<div class="card"><b>${formatCount(summary.tripped)}</b>with an intervention</div>
<div class="card"><b>${formatCount(summary.steered)}</b>steered</div>
<div class="card"><b>${formatCount(summary.stopped)}</b>would have stopped</div>
<div class="card"><b>${formatCount(summary.stepsSaved)}</b>steps not run after a stop (of ${formatCount(summary.stepsTotal)})</div>
<div class="card"><b>${escapeHtml(tokensLine)}</b>tokens saved by the stops</div>
${summary.trajectoriesWithTokens === 0 ? '' : `<div class="card"><b>${formatCount(summary.tokensAfterSteer)}</b>tokens spent after a first steer</div>`}
<div class="card"><b>${formatCount(summary.malformedLines)}</b>malformed lines skipped</div>
</div>
${barChart(
  'Trips by category (of the first intervention)',
  categories.map(([label, t]) => ({ label, value: t.trips })),
  ['trip', 'trips'],
)}
${barChart(
  'Steps saved by category (of the stop)',
  categories.map(([label, t]) => ({ label, value: t.stepsSaved })),
  ['step', 'steps'],
)}
${positionCharts(summary)}
<h2>Tripped runs${shown < summary.tripped ? ` (first ${formatCount(shown)} of ${formatCount(summary.tripped)})` : ''}</h2>
${
  shown === 0
    ? '<p class="empty">None.</p>'
    : `<p class="sub">Open a run to see each intervention with the breaker's evidence, the steps around them and the steps like the first one side by side (words new since the previous one are marked).</p>
<div class="filter">
<span>Category:</span>
${filter.controls}
<div class="runs">
${runs}
</div>
</div>`
}
<footer>Generated ${escapeHtml(generatedAt.toISOString())} by governor replay.</footer>
</body>
</html>
`;
}
