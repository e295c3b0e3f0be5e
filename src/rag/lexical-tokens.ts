/**
 * Letters, digits and combining marks form words. Marks are included because
 * many scripts (Devanagari, Thai, Arabic with harakat…) write vowels as marks:
 * without them a word would fall apart at every vowel.
 */
const WORD_CHARACTER = /[\p{L}\p{N}\p{M}]/u;
const MARK = /\p{M}/u;

/**
 * Scripts written without spaces between words, whose runs are split into
 * overlapping character pairs (the usual stand-in for a word segmenter).
 * Korean is spaced, but particles attach to words (한국어를, 한국어가), so
 * pairs let those forms match too. Script_Extensions, not Script, so that
 * the Katakana prolonged sound mark (ー, Script=Common) stays inside its word.
 */
const UNSPACED_SCRIPT =
  /[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}\p{Script_Extensions=Hangul}\p{Script_Extensions=Thai}\p{Script_Extensions=Lao}\p{Script_Extensions=Khmer}\p{Script_Extensions=Myanmar}]/u;

type CharacterClass = 'word' | 'unspaced';

/**
 * Splits text into lexical tokens in any script: NFKC-normalised and
 * lower-cased words of letters, digits and marks; runs of Chinese, Japanese,
 * Korean, Thai, Lao, Khmer or Myanmar characters as character bigrams (a
 * single such character stands alone). Punctuation, symbols and spaces
 * separate tokens.
 *
 * @example lexicalTokens('GPT-4 で東京の天気') // ['gpt', '4', 'で東', '東京', '京の', 'の天', '天気']
 */
export function lexicalTokens(text: string): string[] {
  const tokens: string[] = [];
  let run: string[] = [];
  let runClass: CharacterClass = 'word';

  const flush = (): void => {
    if (run.length === 0) return;
    if (runClass === 'word' || run.length === 1) {
      tokens.push(run.join(''));
    } else {
      for (let i = 0; i + 1 < run.length; i++) tokens.push(`${run[i]}${run[i + 1]}`);
    }
    run = [];
  };

  for (const character of text.normalize('NFKC').toLowerCase()) {
    if (!WORD_CHARACTER.test(character)) {
      flush();
      continue;
    }
    if (MARK.test(character) && run.length > 0) {
      // A mark belongs to the character before it, whatever the script.
      run[run.length - 1] += character;
      continue;
    }
    const characterClass: CharacterClass = UNSPACED_SCRIPT.test(character) ? 'unspaced' : 'word';
    if (characterClass !== runClass) {
      flush();
      runClass = characterClass;
    }
    run.push(character);
  }
  flush();
  return tokens;
}
