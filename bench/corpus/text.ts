/**
 * Text helpers shared by the scenario generators: Python-style JSON (the
 * separators real customer-service tool results use) and the truncation the
 * corpus applies to long tool results and model texts.
 */

/** Longest tool result kept in the corpus, as in the real development corpus. */
export const MAX_RESULT_CHARS = 2000;

/** Longest model text kept in the corpus. */
export const MAX_MODEL_TEXT_CHARS = 1500;

/**
 * `json.dumps` with Python's default separators (`", "`, `": "`) and
 * non-ASCII kept, which is how many agent frameworks render tool results.
 */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(', ')}}`;
}

/**
 * Cuts `text` to at most `max` characters with a marker saying how much was
 * dropped. `fullLength` is the length of the real output when only its head
 * was generated (the token accounting uses it too).
 */
export function truncate(text: string, max: number, fullLength = text.length): string {
  if (fullLength <= max && text.length <= max) return text;
  const marker = (n: number): string => `...[truncated ${n} chars]`;
  const keep = max - marker(fullLength).length;
  const head = [...text].slice(0, keep).join('');
  return head + marker(fullLength - head.length);
}

/** Left-pads a number with zeros. */
export function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** `YYYY-MM-DD` for a day offset from a base date, without Date (no clock, no time zones). */
export function isoDate(year: number, month: number, day: number, offsetDays = 0): string {
  const lengths = [31, year % 4 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  let y = year,
    m = month,
    d = day + offsetDays;
  while (d > (lengths[m - 1] as number)) {
    d -= lengths[m - 1] as number;
    m++;
    if (m > 12) {
      m = 1;
      y++;
    }
  }
  while (d < 1) {
    m--;
    if (m < 1) {
      m = 12;
      y--;
    }
    d += lengths[m - 1] as number;
  }
  return `${y}-${pad(m, 2)}-${pad(d, 2)}`;
}

/** `HH:MM:SS` from seconds since midnight. */
export function clock(seconds: number): string {
  const s = ((seconds % 86400) + 86400) % 86400;
  return `${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor((s % 3600) / 60), 2)}:${pad(s % 60, 2)}`;
}
