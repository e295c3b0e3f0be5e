/**
 * A store note the proxy writes as JSON: a string under `head` (what the
 * note is about) and `calls`, rows of strings of `minWidth` to `maxWidth`
 * parts. Anything else (another version's note) counts as none.
 */
export function parseCallsNote(text: string, head: string, minWidth: number, maxWidth: number): { head: string; calls: string[][] } | undefined {
  let note: unknown;
  try {
    note = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (note === null || typeof note !== 'object') return undefined;
  const about = (note as Record<string, unknown>)[head];
  const calls = (note as { calls?: unknown }).calls;
  if (typeof about !== 'string' || !Array.isArray(calls)) return undefined;
  for (const call of calls) {
    if (!Array.isArray(call) || call.length < minWidth || call.length > maxWidth || !call.every((part) => typeof part === 'string')) return undefined;
  }
  return { head: about, calls: calls as string[][] };
}
