/**
 * The `label_confidence` of each line of a labelled corpus ("clear" or
 * "ambiguous"), by line number. It is an extra field beyond the trajectory
 * format, which replay ignores; the benchmark reads it on the side to report
 * figures on clear labels alone. Lines without it, or that do not parse, are
 * absent.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export async function labelConfidence(file: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  let lineNumber = 0;
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    lineNumber++;
    if (!line.includes('"label_confidence"')) continue;
    try {
      const value = (JSON.parse(line) as { label_confidence?: unknown }).label_confidence;
      if (typeof value === 'string') out.set(lineNumber, value);
    } catch {
      // a malformed line is reported by the trajectory reader
    }
  }
  return out;
}
