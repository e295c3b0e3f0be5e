import { isUnspacedToken, tokenHashes, tokenize } from '../similarity/tokenize.ts';

/** Words a user turn needs to count as new information (a character pair of an unspaced script is half a word). */
const MIN_INFORMATIVE_WORDS = 3;
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Whether a user turn or outside event can bring new information, which
 * resets the repetition evidence of every detector. A bare acknowledgement
 * ("ok", "continue", "go on", "お願いします", "👍") cannot: it gives the agent
 * nothing to act on, and looping agents loop straight through such turns.
 * Anything longer may report a change in the world ("I restarted the router,
 * check again"), even when said twice, so it counts.
 */
export function isInformativeUserTurn(text: string): boolean {
  if (!NON_ASCII.test(text)) return tokenHashes(text, MIN_INFORMATIVE_WORDS).length >= MIN_INFORMATIVE_WORDS;
  let words = 0;
  for (const token of tokenize(text, 2 * MIN_INFORMATIVE_WORDS)) {
    words += isUnspacedToken(token) ? 0.5 : 1;
    if (words >= MIN_INFORMATIVE_WORDS) return true;
  }
  return false;
}
