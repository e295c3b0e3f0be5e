import { formatCount, type ReplaySummary } from './replay-summary.ts';

/** Options of {@link renderHtmlReport}. */
export interface HtmlReportOptions {
  /** Name of the replayed file, shown in the title. */
  readonly source: string;
  /** Creation time printed in the footer. @default new Date() */
  readonly generatedAt?: Date;
}

const PALETTE = ['#3867d6', '#eb3b5a', '#20bf6b', '#f7b731', '#8854d0', '#0fb9b1', '#fa8231', '#4b6584'];

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
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
function barChart(title: string, bars: readonly Bar[], unit: readonly [string, string], single = false): string {
  if (bars.length === 0) {
    return `<figure><figcaption>${escapeHtml(title)}</figcaption><p class="empty">Nothing tripped.</p></figure>`;
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

/** Where in their run trajectories were stopped, in tenths of the run. */
function tripPositionBars(summary: ReplaySummary): Bar[] {
  const buckets = new Array<number>(10).fill(0);
  for (const t of summary.trippedList) {
    const fraction = t.stepsTotal === 0 ? 1 : t.step / t.stepsTotal;
    const index = Math.min(9, Math.floor(fraction * 10));
    buckets[index] = (buckets[index] ?? 0) + 1;
  }
  return buckets.map((value, i) => ({ label: `${i * 10}–${i * 10 + 10}% of run`, value }));
}

/**
 * A self-contained HTML page (inline CSS and SVG, no scripts, no external
 * assets) summarising a replay: headline figures, trips by category, steps
 * saved by category, where in the runs the trips fell, and the tripped
 * trajectories with their evidence.
 */
export function renderHtmlReport(summary: ReplaySummary, options: HtmlReportOptions): string {
  const generatedAt = options.generatedAt ?? new Date();
  const categories = [...summary.byCategory];
  const tokensLine =
    summary.trajectoriesWithTokens === 0
      ? 'unknown (the file has no token counts)'
      : `${formatCount(summary.tokensSaved)} of ${formatCount(summary.tokensTotal)}`;
  const shown = summary.trippedList.length;
  const rows = summary.trippedList
    .map(
      (t) =>
        `<tr><td>${t.lineNumber}</td><td class="id">${escapeHtml(t.id)}</td><td>${escapeHtml(t.category)}</td>` +
        `<td>${escapeHtml(t.action)}</td><td>${t.step} / ${t.stepsTotal}</td><td>${t.stepsSaved}</td>` +
        `<td>${t.tokensSaved === undefined ? 'unknown' : formatCount(t.tokensSaved)}</td><td class="reason">${escapeHtml(t.reason)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Governor replay — ${escapeHtml(options.source)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; padding: 0 1rem; color: #1e272e; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
.sub { color: #57606f; margin-top: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1.5rem 0; }
.card { border: 1px solid #d2dae2; border-radius: 8px; padding: .75rem 1rem; min-width: 150px; }
.card b { display: block; font-size: 1.4rem; }
figure { margin: 1.5rem 0; }
figcaption { font-weight: 600; margin-bottom: .5rem; }
svg text { font: 12px system-ui, sans-serif; fill: #1e272e; }
.empty { color: #57606f; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #d2dae2; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #f1f2f6; }
td.id { font-family: ui-monospace, monospace; word-break: break-all; }
td.reason { color: #2f3542; }
footer { margin-top: 2rem; color: #57606f; font-size: 12px; }
</style>
</head>
<body>
<h1>Governor replay report</h1>
<p class="sub">${escapeHtml(options.source)}</p>
<div class="cards">
<div class="card"><b>${formatCount(summary.trajectories)}</b>trajectories replayed</div>
<div class="card"><b>${formatCount(summary.tripped)}</b>tripped</div>
<div class="card"><b>${formatCount(summary.stepsSaved)}</b>steps not run (of ${formatCount(summary.stepsTotal)})</div>
<div class="card"><b>${escapeHtml(tokensLine)}</b>tokens saved</div>
<div class="card"><b>${formatCount(summary.malformedLines)}</b>malformed lines skipped</div>
</div>
${barChart('Trips by category', categories.map(([label, t]) => ({ label, value: t.trips })), ['trip', 'trips'])}
${barChart('Steps saved by category', categories.map(([label, t]) => ({ label, value: t.stepsSaved })), ['step', 'steps'])}
${summary.tripped > 0 ? barChart(`Where runs were stopped${shown < summary.tripped ? ` (first ${shown} trips)` : ''}`, tripPositionBars(summary), ['trip', 'trips'], true) : ''}
<h2>Tripped trajectories${shown < summary.tripped ? ` (first ${formatCount(shown)} of ${formatCount(summary.tripped)})` : ''}</h2>
${shown === 0 ? '<p class="empty">None.</p>' : `<table>
<thead><tr><th>Line</th><th>Id</th><th>Category</th><th>Action</th><th>Step</th><th>Steps saved</th><th>Tokens saved</th><th>Evidence</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`}
<footer>Generated ${escapeHtml(generatedAt.toISOString())} by governor replay.</footer>
</body>
</html>
`;
}
