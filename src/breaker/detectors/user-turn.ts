import { tokenHashes } from '../similarity/tokenize.ts';

/** Word tokens (character pairs in unspaced scripts) a user turn needs to count as new information. */
const MIN_INFORMATIVE_TOKENS = 3;

/**
 * Whether a user turn or outside event can bring new information, which
 * resets the repetition evidence of every detector. A bare acknowledgement
 * ("ok", "continue", "go on", "👍") cannot: it gives the agent nothing to act
 * on, and looping agents loop straight through such turns. Anything longer
 * may report a change in the world ("I restarted the router, check again"),
 * even when said twice, so it counts.
 */
export function isInformativeUserTurn(text: string): boolean {
  return tokenHashes(text, MIN_INFORMATIVE_TOKENS).length >= MIN_INFORMATIVE_TOKENS;
}
