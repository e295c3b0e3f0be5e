import { isSecretValue, looksLikePassword, nameSays } from './secret-names.ts';

/*
 * Credentials after a keyword rather than a name and a separator: `.netrc`
 * entries, SQL statements and sentences. Each pattern starts at a word it
 * needs and reads a bounded number of words after it: linear in the text.
 */

/**
 * `machine HOST login USER password SECRET` (`.netrc`, on one line or
 * several), `default login … password …`, and `password` before `login`.
 * A `login`, `account` or `port` must come between, so prose that names a
 * machine and a password ("the machine learning … password") is no entry.
 */
const NETRC =
  /(\b(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+){1,3}\s+password\s+)(\S+)|(\bmachine\s+\S+\s+password\s+)(\S+)(?=\s+(?:login|account)\s)/g;

/** An SQL string literal: a quote doubled or escaped inside it; one cut before its closing quote runs to the end of its line. */
const SQL_LITERAL = String.raw`'(?:[^'\\\n]|''|\\.)*(?:'|(?=\n)|$)|"(?:[^"\\\n]|""|\\.)*(?:"|(?=\n)|$)`;
/**
 * `[ENCRYPTED] PASSWORD '…'` (PostgreSQL's CREATE/ALTER USER and ROLE),
 * `IDENTIFIED [WITH plugin] BY '…'` (MySQL, Oracle), `SET PASSWORD FOR
 * user = '…'`. The password is a literal, so `PASSWORD NULL` and JSON's
 * `"password": …` are none; Oracle's unquoted `IDENTIFIED BY word` only
 * where the statement ends after it (`identified by the reviewer` is prose).
 */
const SQL_PASSWORD = new RegExp(
  String.raw`(\b(?:PASSWORD(?:\s+FOR\s+[^=;\n]{1,128}?=\s*|[ \t]+)(?=['"])|IDENTIFIED(?:\s+WITH\s+\w+)?\s+BY\s+))(${SQL_LITERAL}|[^\s;'"]{1,128}(?=[ \t]*;))`,
  'gi',
);

/**
 * A sentence that gives a password: `NAME [for WHO] is|was [now|still] [:] VALUE`, `NAME [was|has been] set|changed
 * to VALUE`. The name is judged as an assignment's, and the value more strictly (see {@link sentenceValueIsSecret}). A
 * bare value ends before a backslash, which in JSON text starts an escape (`\n`, `\"`) that must stay whole.
 */
const SENTENCE =
  /(?<![\p{L}\p{M}\p{N}_.-])([\p{L}_][\p{L}\p{M}\p{N}_.-]{0,63})(?:[ \t]+for[ \t]+[^\s:,;]{1,64})?[ \t]+(?:(?:(?:is|was|ha(?:s|ve)[ \t]+been)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to|(?:is|was)(?:[ \t]+(?:now|still))?)(?:[ \t]*:)?[ \t]+((\\+)"[^"\\\n]{1,128}\3"|"[^"\n]{1,128}"|'[^'\n]{1,128}'|\x60[^\x60\n]{1,128}\x60|[^\s"'\x60<>()[\]{},;\\]{1,128})/gu;
/** A quoted value: the quotes may be escaped, in JSON text. */
const QUOTED = /^(\\*)(["'`])(.*)\1\2$/s;
/** What ends a sentence after a bare value, not part of it: the value is judged and redacted without it. */
const SENTENCE_END = /[.:]+$/;

/** What each form needs somewhere in a text. */
const MAY_HOLD = /password\s+(?:['"]|for\s)|\bidentified\s/i;
const NETRC_START = /\b(?:machine|default)\s/;
const NETRC_PASSWORD = /\bpassword\s/;
/** What a sentence needs besides a secret name (which the caller checks). */
const SENTENCE_VERB = /[ \t](?:is|was|to)[ \t:]/i;

/** Whether the text may hold one of these forms, other than a sentence (the check `redact` makes before its rules). */
export function mayHoldKeywordCredential(text: string): boolean {
  return MAY_HOLD.test(text) || (NETRC_START.test(text) && NETRC_PASSWORD.test(text));
}

/** Whether the text may hold a sentence that gives a secret, if it also holds a secret name. */
export function mayHoldSentenceCredential(text: string): boolean {
  return SENTENCE_VERB.test(text);
}

/**
 * A value a sentence gives a name: quoted, as an assignment's (any value of a password-like name); bare, only one
 * that also looks like a password, as a key-like name's must also look generated. A sentence about a password
 * ("the password is incorrect", "the token is 2FA-protected") holds words, which a password rarely is.
 */
function sentenceValueIsSecret(name: string, value: string, quoted: boolean): boolean {
  return isSecretValue(name, value) && (quoted || looksLikePassword(value));
}

/** `text` with the credentials of these forms replaced by `replacement`. */
export function redactKeywordCredentials(text: string, replacement: string): string {
  let out = text;
  if (NETRC_START.test(out) && NETRC_PASSWORD.test(out)) {
    out = out.replace(NETRC, (match, before?: string, value?: string, beforeLogin?: string, valueBeforeLogin?: string) => {
      const password = value ?? valueBeforeLogin ?? '';
      return isSecretValue('password', password) ? `${before ?? beforeLogin ?? ''}${replacement}` : match;
    });
  }
  if (MAY_HOLD.test(out)) {
    out = out.replace(SQL_PASSWORD, (match, before: string, literal: string) => {
      const quote = literal.charAt(0);
      if (quote !== "'" && quote !== '"') return isSecretValue('password', literal) ? `${before}${replacement}` : match;
      const closed = literal.length >= 2 && literal.endsWith(quote);
      return isSecretValue('password', literal.slice(1, closed ? -1 : undefined)) ? `${before}${quote}${replacement}${closed ? quote : ''}` : match;
    });
  }
  if (SENTENCE_VERB.test(out)) {
    out = out.replace(SENTENCE, (match, name: string, value: string) => {
      if (nameSays(name) === 'no') return match;
      const before = match.slice(0, match.length - value.length);
      const quoted = QUOTED.exec(value);
      if (quoted !== null) {
        const [, escapes = '', quote = '', inner = ''] = quoted;
        return sentenceValueIsSecret(name, inner, true) ? `${before}${escapes}${quote}${replacement}${escapes}${quote}` : match;
      }
      const end = SENTENCE_END.exec(value)?.[0] ?? '';
      const bare = value.slice(0, value.length - end.length);
      return sentenceValueIsSecret(name, bare, false) ? `${before}${replacement}${end}` : match;
    });
  }
  return out;
}
