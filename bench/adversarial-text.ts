/**
 * What texts made to be expensive cost: one long word of a repeating pattern
 * (`key=key=key=…`, `1-1-1-…`, `x://x://…`, a run of backslashes), put in
 * every place the breaker reads text and passed to `redact()`, timed against
 * ordinary words of the same length. A rule that reads the rest of a text
 * again from each of its parts shows here as a ratio in the hundreds; the
 * goal is that no pattern costs more than a few times ordinary text.
 */
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import type { BreakerEvent } from '../src/breaker/breaker-event.ts';
import { redact } from '../src/redaction/redact.ts';
import { allDetectorsOn, prng, words } from './overhead.ts';

/**
 * The repeated units: each defeated a rule before (see the README's redaction section and text-identity.ts), the last
 * a sketch (a text of a few words repeated left fewer distinct tokens than a sketch holds in its lowest buckets).
 */
const ADVERSARIAL_UNITS = [
  'key=',
  'token:',
  'auth%3D',
  'x://',
  'a.',
  '-p',
  'secret-',
  '\\',
  '1-',
  '0x',
  'trace-',
  '2024-01-01T',
  '10ms',
  '日本',
  'try again later ',
  'mysql ',
  'redis-cli ',
  'password is ',
] as const;

/** Where a text goes. */
const PLACES: Readonly<Record<string, (text: string) => BreakerEvent | 'redact'>> = {
  'tool arguments (text)': (text) => ({ kind: 'tool_call', tool: 'run', args: text, result: 'ok' }),
  'tool argument field': (text) => ({ kind: 'tool_call', tool: 'run', args: { q: text }, result: 'ok' }),
  'tool result': (text) => ({ kind: 'tool_call', tool: 'run', args: {}, result: text }),
  'tool error': (text) => ({ kind: 'tool_call', tool: 'run', args: {}, result: text, error: true }),
  'model reply': (text) => ({ kind: 'model', text, promptTokens: 100, completionTokens: 20 }),
  'user turn': (text) => ({ kind: 'user', text }),
  'retrieval query and passage': (text) => ({ kind: 'retrieval', query: text, results: [text] }),
  'delegation task and answer': (text) => ({ kind: 'delegation', agent: 'researcher', input: text, output: text }),
  'redact()': () => 'redact',
};

interface AdversarialRow {
  readonly unit: string;
  readonly place: string;
  /** Fastest of the repeats (ms). */
  readonly ms: number;
  /** The same place with ordinary words of the same length (ms). */
  readonly ordinaryMs: number;
}

export interface AdversarialReport {
  /** Length of each text (characters). */
  readonly chars: number;
  readonly rows: readonly AdversarialRow[];
}

export interface AdversarialOptions {
  /** @default 65536 */
  readonly chars?: number;
  /** Timed repeats of each cell; the fastest counts. @default 3 */
  readonly repeats?: number;
  /** @default ADVERSARIAL_UNITS */
  readonly units?: readonly string[];
}

export async function measureAdversarialText(options: AdversarialOptions = {}): Promise<AdversarialReport> {
  const chars = options.chars ?? 65_536;
  const repeats = options.repeats ?? 3;
  const breaker = new AgentBreaker(allDetectorsOn(undefined, false));
  let session = 0;
  const time = async (place: (text: string) => BreakerEvent | 'redact', text: string): Promise<number> => {
    let best = Number.POSITIVE_INFINITY;
    // One untimed run first, so that compiling the code is not billed to the figure.
    for (let i = 0; i <= repeats; i++) {
      const event = place(text);
      // The same place with a short text first: a cache of the last text read (a delegation's task) is not a figure.
      if (event !== 'redact') await breaker.observe(`adversarial-${session++}`, place(`reset ${i}`) as BreakerEvent);
      const start = performance.now();
      if (event === 'redact') redact(text);
      else await breaker.observe(`adversarial-${session++}`, event);
      if (i > 0) best = Math.min(best, performance.now() - start);
    }
    return best;
  };
  const ordinaryText = words(prng(1), chars);
  const ordinary = new Map<string, number>();
  for (const [name, place] of Object.entries(PLACES)) ordinary.set(name, await time(place, ordinaryText));
  const rows: AdversarialRow[] = [];
  for (const unit of options.units ?? ADVERSARIAL_UNITS) {
    const text = unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
    for (const [name, place] of Object.entries(PLACES)) {
      rows.push({ unit, place: name, ms: await time(place, text), ordinaryMs: ordinary.get(name) ?? Number.NaN });
    }
  }
  return { chars, rows };
}

/** The costliest pattern of each place, and the costliest of all. */
export function formatAdversarialText(report: AdversarialReport): string {
  const lines = [
    `Adversarial text: one word of ${report.chars.toLocaleString('en-US')} characters repeating a pattern, in each place text is read (fastest of the repeats, ms)`,
    '',
    `${'place'.padEnd(30)}${'ordinary words'.padStart(16)}${'costliest pattern'.padStart(20)}${'its cost'.padStart(10)}${'× ordinary'.padStart(12)}`,
  ];
  const byPlace = new Map<string, AdversarialRow>();
  for (const row of report.rows) {
    const worst = byPlace.get(row.place);
    if (worst === undefined || row.ms > worst.ms) byPlace.set(row.place, row);
  }
  for (const row of byPlace.values()) {
    lines.push(
      `${row.place.padEnd(30)}${row.ordinaryMs.toFixed(2).padStart(16)}${JSON.stringify(row.unit).padStart(20)}${row.ms.toFixed(2).padStart(10)}${(row.ms / Math.max(row.ordinaryMs, 0.01)).toFixed(1).padStart(12)}`,
    );
  }
  return lines.join('\n');
}
