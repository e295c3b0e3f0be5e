/*
 * Private keys cut short. A whole PEM block is a token rule (secret-rules.ts);
 * these are the halves a cap or a `head` leaves: the BEGIN line with part of
 * the body, or part of the body with the END line. Each is found in one pass,
 * without a pattern that could backtrack over a long body.
 */

const LABEL = '[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----';

/**
 * A BEGIN line and what follows it that can be part of a key body: base64,
 * line breaks (also as `\n` escapes in JSON text) and the `Proc-Type:` /
 * `DEK-Info:` headers of an encrypted key. It runs into any words that
 * follow, up to the first other character: more is lost, nothing leaks.
 */
const BEGIN_CUT = new RegExp(`-----BEGIN${LABEL}[A-Za-z0-9+/=\\s\\\\:,-]*`, 'g');
const END_LINE = new RegExp(`-----END${LABEL}`, 'g');

/** Body lines are 64 (PEM) or 70 (OpenSSH) characters; shorter runs before the last line are words, not key. */
const MIN_BODY_LINE = 16;

/** Whether the text may hold a part of a private key (the check `redact` makes before its rules). */
export function mayHoldPrivateKey(text: string): boolean {
  return text.includes('PRIVATE KEY');
}

/** `text` with the parts of private keys cut short replaced by `replacement`. */
export function redactCutPrivateKeys(text: string, replacement: string): string {
  if (!mayHoldPrivateKey(text)) return text;
  const out = text.replace(BEGIN_CUT, replacement);
  let result = '';
  let copied = 0;
  for (const match of out.matchAll(END_LINE)) {
    const start = bodyStart(out, match.index, copied);
    if (start === match.index) continue;
    result += `${out.slice(copied, start)}${replacement}`;
    copied = match.index + match[0].length;
  }
  return copied === 0 ? out : result + out.slice(copied);
}

function isBase64(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 61;
}

/** Whether `text[at - 2, at)` is a `\n` or `\r` escape. */
function isEscapedBreak(text: string, at: number): boolean {
  const c = text.charCodeAt(at - 1);
  return at >= 2 && (c === 110 || c === 114) && text.charCodeAt(at - 2) === 92;
}

/**
 * Where the body lines before an END line at `end` begin: walks back over
 * runs of base64 separated by white space or `\n` escapes, taking the run
 * right before the END line whatever its length and earlier runs only as
 * long as a body line (a cut one included, if it starts the text or a line).
 */
function bodyStart(text: string, end: number, floor: number): number {
  let start = end;
  for (let first = true; ; first = false) {
    let j = start;
    for (;;) {
      const c = text.charCodeAt(j - 1);
      if (j > floor && (c === 32 || c === 9 || c === 10 || c === 13)) j--;
      else if (j - 2 >= floor && isEscapedBreak(text, j)) j -= 2;
      else break;
    }
    let k = j;
    while (k > floor && isBase64(text.charCodeAt(k - 1)) && !isEscapedBreak(text, k)) k--;
    const atLineStart = k === floor || isEscapedBreak(text, k) || text.charCodeAt(k - 1) === 10 || text.charCodeAt(k - 1) === 13;
    if (k === j || (!first && j - k < MIN_BODY_LINE && !atLineStart)) return start;
    start = k;
  }
}
