import { mayHoldCommandLineCredential } from './command-line-credentials.ts';
import { mayHoldKeywordCredential, mayHoldSentenceCredential } from './keyword-credentials.ts';
import { mayHoldPrivateKey } from './private-keys.ts';
import { TOKEN_RULES } from './secret-rules.ts';

/**
 * The token rules of `redact`, grouped by flags into one alternation
 * each: one pass over a text instead of one per rule, to tell whether any
 * rule can match it at all. A rule matches somewhere exactly when its group does.
 */
const TOKEN_SHAPES: readonly RegExp[] = (() => {
  const byFlags = new Map<string, string[]>();
  for (const { pattern } of TOKEN_RULES) {
    const flags = pattern.flags.replace(/[gy]/g, '');
    byFlags.set(flags, [...(byFlags.get(flags) ?? []), `(?:${pattern.source})`]);
  }
  return [...byFlags].map(([flags, sources]) => new RegExp(sources.join('|'), flags));
})();

/** What the other rules of `redact` need somewhere in a text: a `:` or `=` (an assignment, a URL's password; full-width or URL-encoded too), a `-` before a letter (a command-line flag), `Bearer` or `Basic` (an authorisation); or a sentence's verb (see {@link mayHoldSentenceCredential}). */
const OTHER_RULES_NEED = /[:=：＝]|%(?:25){0,7}3[ad]|-[A-Za-z]|bearer|basic/i;
const AUTH_OR_URL = /bearer|basic|authorization|:\/\//i;
/**
 * An assignment, a flag or an XML element is only redacted when its name
 * holds a password or secret word, or ends in a word that names a secret
 * (secret-names.ts: ALWAYS_SECRET, OFTEN_SECRET and the suffixes), then
 * `_`, `.` or `-` at most, a quote (escaped, in JSON text), and its
 * separator, the end of the tag (inside Markdown emphasis too), white space
 * (a sentence's `password is …`; a `\n` escape in JSON text) or the `,`
 * after a list entry's name (`"name": "DB_PASSWORD", "value": …`), or a
 * URL-encoded quote and separator. Names are at most 64 characters in the
 * rules, so the part after the word is bounded too: unbounded, a long word
 * repeating one (`secret-secret-…`) would be read again from each.
 */
const SECRET_NAME =
  /(?:pass(?:wd|word|phrase)?|pwd?|secrets?|credentials?|kennwort|contrase[ñn]a|senha|пароль|密码|密碼|パスワード|비밀번호)[\w.-]{0,64}\**(?:\\*["']?[\s:=>：＝,]|\\+n|(?:%(?:25){0,7}2[27])?%(?:25){0,7}3[ad])|(?:key|token|auth(?:orization)?|jwt|sig(?:nature)?|cookie|dsn|sas)[._-]{0,64}\**(?:\\*["']?[\s:=>：＝,]|\\+n|(?:%(?:25){0,7}2[27])?%(?:25){0,7}3[ad])/i;

/**
 * Whether `redact` could change `text`: false only when none of its rules can
 * match, so that `redact` returns such a text at once. Running every rule
 * costs about 10 µs per 300 characters; this check a fifth of that, and most
 * texts (prose, logs without credentials) need nothing more. It follows the
 * rules in `redact.ts`: the tests hold the two together.
 */
export function mayHoldSecret(text: string): boolean {
  const mayName = OTHER_RULES_NEED.test(text) || text.includes('<') || mayHoldSentenceCredential(text);
  if (mayName && (AUTH_OR_URL.test(text) || SECRET_NAME.test(text))) return true;
  if (mayHoldCommandLineCredential(text) || mayHoldKeywordCredential(text) || mayHoldPrivateKey(text)) return true;
  return TOKEN_SHAPES.some((shapes) => shapes.test(text));
}
