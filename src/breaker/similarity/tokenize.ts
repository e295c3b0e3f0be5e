/**
 * Unicode-aware tokenisation for similarity.
 *
 * Words are runs of letters, digits and combining marks in any script. Scripts
 * written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
 * Khmer, Myanmar, Tibetan) have no word boundary a regex can see, so their runs
 * become overlapping character bigrams: two different Japanese sentences then
 * share only the bigrams they really share instead of collapsing into one
 * "word" or into nothing.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const NON_ASCII = /[^\x00-\x7f]/;
const NO_SPACE_SCRIPT =
  /[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}\p{Script_Extensions=Thai}\p{Script_Extensions=Lao}\p{Script_Extensions=Khmer}\p{Script_Extensions=Myanmar}\p{Script_Extensions=Tibetan}]/u;
const MARK = /\p{M}/u;

/**
 * Lower-cases and applies NFKC (full-width letters and digits become their
 * ordinary forms) so that trivially different spellings compare equal.
 */
export function normalizeText(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFKC').toLowerCase() : text.toLowerCase();
}

/**
 * Splits text into comparable tokens: words for spaced scripts, character
 * bigrams for unspaced ones. Order is kept and duplicates are not removed.
 * At most `limit` tokens are produced (long inputs are judged on their start).
 */
export function tokenize(text: string, limit = 4096): string[] {
  const out: string[] = [];
  const normalized = normalizeText(text);
  WORD.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = WORD.exec(normalized)) !== null && out.length < limit) {
    const word = match[0];
    if (!NON_ASCII.test(word) || !NO_SPACE_SCRIPT.test(word)) {
      out.push(word);
      continue;
    }
    splitUnspaced(word, out, limit);
  }
  return out;
}

/** A word mixing spaced and unspaced scripts: words for the former, bigrams for the latter. */
function splitUnspaced(word: string, out: string[], limit: number): void {
  let spaced = '';
  let clusters: string[] = [];
  const flushSpaced = () => {
    if (spaced.length > 0) out.push(spaced);
    spaced = '';
  };
  const flushClusters = () => {
    if (clusters.length === 1) out.push(clusters[0]!);
    for (let i = 0; i + 1 < clusters.length && out.length < limit; i++) {
      out.push(clusters[i]! + clusters[i + 1]!);
    }
    clusters = [];
  };
  for (const ch of word) {
    if (MARK.test(ch)) {
      // A combining mark belongs to the character before it (Thai vowels, tone marks).
      if (clusters.length > 0 && spaced.length === 0) clusters[clusters.length - 1] += ch;
      else spaced += ch;
    } else if (NO_SPACE_SCRIPT.test(ch)) {
      flushSpaced();
      clusters.push(ch);
    } else {
      flushClusters();
      spaced += ch;
    }
  }
  flushSpaced();
  flushClusters();
}
