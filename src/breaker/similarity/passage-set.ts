import { hash53, UnorderedHash } from './hash.ts';
import { resultHash } from './result-hash.ts';

/**
 * Numbers with a fractional part: the relevance score, distance or
 * similarity a retriever prints next to a hit. They move from one query to
 * the next while the passage stays the same.
 */
const FRACTION = /\d+\.\d+(?:e[-+]?\d+)?/gi;

/**
 * A document id as a retriever reports it (`QuestionAnswerAdvisor` reports
 * ids): one word, no longer than ids are. It names the document exactly,
 * whatever it looks like: a UUID or `handbook-4.1` is no timestamp or score
 * to mask.
 */
const DOCUMENT_ID = /^\S{1,200}$/;

/**
 * Hash of a set of retrieved passages, independent of their order and of
 * the scores printed with them: the same passages ranked differently, or
 * scored a little differently, are the same documents. Reported ids (see
 * DOCUMENT_ID) are hashed as they are. `null` when the results were not
 * reported; 0 when nothing was retrieved (no information).
 */
export function passageSetHash(results: readonly string[] | undefined): number | null {
  if (results === undefined) return null;
  if (results.length === 0) return 0;
  const set = new UnorderedHash();
  for (const passage of results) set.add('', DOCUMENT_ID.test(passage) ? hash53(passage) || 1 : resultHash(passage.replace(FRACTION, '#')));
  return set.digest();
}
