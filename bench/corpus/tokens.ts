/**
 * Token estimates for realistic accounting without a tokenizer: about four
 * characters per token for Latin text and code, one per CJK character, and
 * in between for other scripts (Cyrillic, Arabic, …), which BPE vocabularies
 * split more finely than English.
 */
export function estimateTokens(text: string): number {
  let latin = 0;
  let cjk = 0;
  let other = 0;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0x80) latin++;
    else if (isCjk(code)) cjk++;
    else other++;
  }
  return Math.ceil(latin / 4 + cjk * 0.95 + other / 2.4);
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x3040 && code <= 0x30ff) || // hiragana, katakana
    (code >= 0x3400 && code <= 0x9fff) || // CJK ideographs
    (code >= 0xac00 && code <= 0xd7af) || // hangul syllables
    (code >= 0xff00 && code <= 0xffef) // full-width forms
  );
}

/** Tokens a chat API adds around each message (role, separators). */
export const MESSAGE_OVERHEAD = 4;

/** Tokens a tool call adds besides its arguments (name, id, wrapper). */
export const TOOL_CALL_OVERHEAD = 12;
