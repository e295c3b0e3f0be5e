import { UnorderedHash } from './hash.ts';
import { resultHash } from './result-hash.ts';

/**
 * Numbers with a fractional part: the relevance score, distance or
 * similarity a retriever prints next to a hit. They move from one query to
 * the next while the passage stays the same.
 */
const FRACTION = /\d+\.\d+(?:e[-+]?\d+)?/gi;

/**
 * Hash of a set of retrieved passages, independent of their order and of
 * the scores printed with them: the same passages ranked differently, or
 * scored a little differently, are the same documents. `null` when the
 * results were not reported; 0 when nothing was retrieved (no information).
 */
export function passageSetHash(results: readonly string[] | undefined): number | null {
  if (results === undefined) return null;
  if (results.length === 0) return 0;
  const set = new UnorderedHash();
  for (const passage of results) set.add('', resultHash(passage.replace(FRACTION, '#')));
  return set.digest();
}
