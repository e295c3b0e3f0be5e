import { redactCommandLineCredentials } from './command-line-credentials.ts';
import { redactKeywordCredentials } from './keyword-credentials.ts';
import { mayHoldSecret } from './may-hold-secret.ts';
import { redactCutPrivateKeys } from './private-keys.ts';
import { isSecretValue, nameSays, secretUnderKey } from './secret-names.ts';
import { AWS_KEY_PAIR, TOKEN_RULES } from './secret-rules.ts';

/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

// `Bearer …` / `Basic …`, also URL-encoded (`Basic%20…`). So that prose ("Basic functionality") is left alone, the
// value must hold a digit or a symbol, or, after `Basic`, be the base64 of a `user:password` (`dXNlcjpwYXNz`).
const AUTH_SCHEME = /(?:\b|(?<=%(?:25){0,7}[0-9A-Fa-f]{2}))(Bearer|Basic)(\s+|%(?:25){0,7}20)((?:[A-Za-z0-9._~+/=-]|%[0-9A-Fa-f]{2}){4,})/gi;
// `Authorization: <scheme> <credentials>` for any scheme (`Token …`, `ApiKey …`), when the credentials look generated.
const AUTHORIZATION = /\b(authorization\\*["']?[ \t]*[:=][ \t]*\\*["']?[A-Za-z][\w-]{0,31}[ \t]+)([^\s"'\\,;]{8,})/gi;

// scheme://user:password@host — the password may contain `@` and `/`: it runs to the last `@` that a host follows.
// A user that looks generated is a token (`https://<token>@github.com/…`, `https://<token>:x-oauth-basic@…`).
// The match starts at `://`, not at the scheme, which it does not need: whatever is glued before a scheme (a word
// of any length, `_`, a percent escape) cannot hide the password behind it. A user and a password hold no `://`,
// so that no character is read again for each `://` before it (`x://x://x://…` without an `@`): linear time on
// any input.
const URL_USERINFO = /:\/\/([^\s:/@?#]*)(:(?:[^\s?#:]|:(?!\/\/))*)?@(?=[\w.-]+(?::\d+)?(?:[/?#\s"'`,;)\]}>]|$))/g;

// name = value, name: value, "name": "value", name='value' (env files, YAML, JSON, connection strings, headers),
// also inside JSON text, where the quotes are escaped (`\"password\": \"…\"`, at any depth of escaping). A name is in
// any script (`пароль`), the separator may be full-width (`密码：…`) or inside Markdown emphasis (`**Password:** …`).
// The name is bounded and must start a word, and a value is only read after a secret name: linear time on any input.
const NAME = String.raw`[\p{L}_][\p{L}\p{M}\p{N}_.-]{0,63}`;
const SEPARATOR = String.raw`\*{0,2}[ \t]*(?::=|=>|[:=：＝])\*{0,2}`;
// A prompt may show a default in brackets between its name and its colon (`AWS Secret Access Key [None]: …`).
const PROMPT_DEFAULT = String.raw`(?:[ \t]+\[[^\[\]\n]{0,64}\])?`;
// Escaping backslashes are taken from the start of their run only: starting inside it would read the rest again.
const ESCAPES = String.raw`(?:(?<!\\)\\+)?`;
const ASSIGNMENT = new RegExp(String.raw`(?<![\p{L}\p{M}\p{N}_.-])(${ESCAPES}["']?)(${NAME})\1(${PROMPT_DEFAULT}${SEPARATOR}[ \t]*)`, 'gu');
// The same in URL-encoded text (`password%3Dhunter2`, `%22api_key%22%3A%22…`): a name also starts right after a
// percent escape, and the separator and quotes may be encoded, once or more (`%253D`). Group 4 holds a `25` for
// each encoding beyond the first, at most 7.
const ENCODED_ASSIGNMENT = new RegExp(
  String.raw`(?:(?<![\p{L}\p{M}\p{N}_.-])|(?<=%(?:25){0,7}[0-9A-Fa-f]{2}))(${ESCAPES}["']?|%(?:25){0,7}2[27])(${NAME})\1(${PROMPT_DEFAULT}${SEPARATOR}[ \t]*|(?:%(?:25){0,7}2[27])?%((?:25){0,7})3[ADad])`,
  'gu',
);
// Whether a text holds an encoded `:` or `=`, and needs ENCODED_ASSIGNMENT.
const ENCODED_SEPARATOR = /%(?:25){0,7}3[ADad]/;
// A value quoted with escaped quotes, a quoted one, or a bare one. A quoted value cut off before its closing quote
// runs to the end of the line. A bare value runs to the first delimiter (full-width ones too); a `[REDACTED]` an
// earlier rule left in it is part of it, not its end (`credentials: http://me:[REDACTED]@host` is one value, not
// `http://me:[REDACTED` and a stray `]@host`), and a backslash is part of it unless it escapes a quote.
const BARE_PART = String.raw`(?:\[REDACTED\]|\\+(?![\\"'])|[^\s"',;&<>)}\]\\，；])`;
/**
 * Parts of a bare value judged: a secret shows what it is long before this, and a bound keeps each name's look at
 * its value short, where a text of many names in one long word (`key=key=key=…`) would otherwise have the rest of
 * the word read again for each. A value judged a secret is redacted whole (see {@link BARE_REST}).
 */
const JUDGED_PARTS = 128;
/** What a value cut at {@link JUDGED_PARTS} may end in that its whole does not: a separator, part of an escape. */
const CUT_END = /[_.:/-]+$|%[0-9A-Fa-f]?$/;

/** The part of a bare value to judge: a value that may have been cut loses what the cut may have left at its end. */
function judgedPart(value: string | undefined): string {
  if (value === undefined) return '';
  return value.length < JUDGED_PARTS ? value : value.replace(CUT_END, '');
}

/** How long a value found at `at` is: what was judged, and past a bare one what `rest` (sticky, matching always) reads on. */
function valueLength(judged: string, bare: string | undefined, rest: RegExp, text: string, at: number): number {
  if (bare === undefined) return judged.length;
  rest.lastIndex = at + judged.length;
  return judged.length + (rest.exec(text)?.[0].length ?? 0);
}
const ASSIGNED_VALUE = new RegExp(
  String.raw`(\\+)"((?:(?!\1")[^\n])*)(\1"|(?=\n)|$)|"((?:[^"\\\n]|\\.)*)("|(?=\n)|$)|'([^'\n]*)'|(${BARE_PART}{1,${JUDGED_PARTS}})`,
  'y',
);
/** The rest of a bare value past the parts judged. */
const BARE_REST = new RegExp(`${BARE_PART}*`, 'y');
// The further words of a bare value that follows a separator and a space, under a name that always holds a secret
// (`password: correct horse battery staple`, `passphrase = my dog has fleas`): a passphrase may hold spaces. They run
// to the end of the line (a `\n` escape too, in JSON text), a delimiter of a key-value list, or the next name and
// separator (`password: two words user: bob`); an apostrophe between letters is part of a word (`don't`).
// `NAME=value` with no space is the shell's and the URL's form, where a space ends the value (`PGPASSWORD=… psql -h
// db` keeps its command), and a first word without a letter is a count (`tests pass: 12 of 12`), not a passphrase.
// In this form `&` is part of a word (`password: p@ss&w0rd`), and so are a closing bracket or `>` inside one
// (`Abc)123`); at the end of a word they close what the text opened before the name (`(password: Welcome1) and …`),
// and a `<` that opens a closing tag (`</p>`) ends the value. In a URL's query or a form body, which has no space after its
// `=`, `&` ends it (BARE_PART).
const PASSPHRASE_CHAR = String.raw`(?:[^\s"',;\\，；)\]}<>]|[)\]}>](?=[^\s"',;\\，；)\]}<>])|<(?!/))`;
const MORE_WORDS = new RegExp(
  String.raw`${PASSPHRASE_CHAR}*(?:(?:[ \t]+(?!${NAME}\\*["']?${SEPARATOR})|(?<=\p{L})'(?=\p{L}))(?:\[REDACTED\]|\\+(?![\\nr"'])|(?<=\p{L})'(?=\p{L})|${PASSPHRASE_CHAR})+)*`,
  'uy',
);
const SPACED_SEPARATOR = /[ \t：＝]$/;
/**
 * The rest of a secret's bare value past an `&` that is part of it (outside a query, see plainValue); one that
 * starts the next `name=` field (a form body that begins with the secret) ends it.
 */
const AMPERSAND_REST = new RegExp(String.raw`(?:&(?![\w.-]+=)${BARE_PART}+)+`, 'uy');

// <password>value</password>, <apiKey>value</apiKey> (XML configuration, SOAP bodies).
const XML_ELEMENT = /<([A-Za-z_][\w.:-]{0,63})(\s[^<>]{0,256})?>([^<\n]{1,4096})<\/\1>/g;

// --password VALUE, --api-key=VALUE on command lines. A flag starts a word (or follows a `\n` escape, in JSON text):
// inside one (`S3cr3t-pw to`) a secret-like ending is no flag, and the word after it no value.
const FLAG = /(?:(?<![\p{L}\p{N}_./\\-])|(?<=\\[nrt]))(--?[A-Za-z][\w-]{0,63})(\s+|=)([^\s"'-][^\s"']{0,4095})/gu;
const JOINED_SHORT_OPTION = /^-[a-z][A-Z]/;

// A name and its value given as two entries (`- name: DB_PASSWORD⏎  value: "…"` of a Kubernetes env list,
// `{"name": "API_TOKEN", "value": "…"}`, `{"key": …, "value": …}`): the value is judged by the name it is given.
const NAMED_VALUE = new RegExp(
  String.raw`(?<![\p{L}\p{M}\p{N}_.-])(${ESCAPES}["']?)(?:name|key)\1${SEPARATOR}[ \t]*(${ESCAPES}["']?)(${NAME})\2[ \t]*(?:,|\r?\n|(?:\\+r)?\\+n)[ \t]*(${ESCAPES}["']?)value\4(${SEPARATOR}[ \t]*)`,
  'giu',
);

/** A secret value found after a name and its separator: how long it is in the text, and what replaces it. */
interface FoundValue {
  readonly length: number;
  readonly shown: string;
}

function redactAssignments(text: string): string {
  const pattern = new RegExp((ENCODED_SEPARATOR.test(text) ? ENCODED_ASSIGNMENT : ASSIGNMENT).source, 'gu');
  return redactValuesAfter(text, pattern, (match, at) => {
    const [, , name = '', separator = '', encodedDepth] = match;
    const says = nameSays(name);
    if (says === 'no') return undefined;
    if (encodedDepth !== undefined) return encodedValue(text, at, name, encodedDepth);
    // After `?` or `&` the name is a field of a query or a form body, where `&` starts the next one.
    const inQuery = match.index > 0 && /[?&]/.test(text[match.index - 1]!);
    return plainValue(text, at, name, separator, says === 'always', inQuery);
  });
}

function redactNamedValues(text: string): string {
  const pattern = new RegExp(NAMED_VALUE.source, NAMED_VALUE.flags);
  return redactValuesAfter(text, pattern, (match, at) => {
    const [, , , name = '', , separator = ''] = match;
    const says = nameSays(name);
    return says === 'no' ? undefined : plainValue(text, at, name, separator, says === 'always');
  });
}

/**
 * `text` with the value after each match of `pattern` (global) replaced as `valueAt` finds it, given the match and
 * where the value starts; a value found is not read again for names.
 */
function redactValuesAfter(text: string, pattern: RegExp, valueAt: (match: RegExpExecArray, at: number) => FoundValue | undefined): string {
  let out = '';
  let copied = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    const found = valueAt(match, pattern.lastIndex);
    if (found === undefined) continue;
    out += `${text.slice(copied, pattern.lastIndex)}${found.shown}`;
    copied = pattern.lastIndex + found.length;
    pattern.lastIndex = copied;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * @param always whether the name always holds a secret: only then may a bare value hold spaces
 * @param inQuery whether the name is a field of a URL query or a form body: then `&` ends the value, elsewhere
 * (`DB_PASSWORD=p@ss&w0rd` in a .env file) a secret's value goes on through it
 */
function plainValue(text: string, at: number, name: string, separator: string, always: boolean, inQuery = true): FoundValue | undefined {
  ASSIGNED_VALUE.lastIndex = at;
  const found = ASSIGNED_VALUE.exec(text);
  if (found === null) return undefined;
  const [judged, backslashes, escaped, escapedEnd, dq, dqEnd, sq, bare] = found;
  if (!isSecretValue(name, escaped ?? dq ?? sq ?? judgedPart(bare))) return undefined;
  const length = valueLength(judged, bare, BARE_REST, text, at);
  if (backslashes !== undefined) return { length, shown: `${backslashes}"${REDACTED}${escapedEnd}` };
  if (dq !== undefined) return { length, shown: `"${REDACTED}${dqEnd}` };
  if (sq !== undefined) return { length, shown: `'${REDACTED}'` };
  if (always && !inQuery && text[at + length] === '&') {
    AMPERSAND_REST.lastIndex = at + length;
    return { length: length + (AMPERSAND_REST.exec(text)?.[0].length ?? 0), shown: REDACTED };
  }
  if (!always || !SPACED_SEPARATOR.test(separator) || !/\p{L}/u.test(bare ?? '')) return { length, shown: REDACTED };
  MORE_WORDS.lastIndex = at + length;
  return { length: length + (MORE_WORDS.exec(text)?.[0].length ?? 0), shown: REDACTED };
}

/** A value after an encoded separator, and the rest of a bare one past the parts judged (as {@link BARE_REST}). */
interface EncodedValuePatterns {
  readonly value: RegExp;
  readonly rest: RegExp;
}

/** Value patterns after an encoded separator, by its depth (see {@link encodedValuePatterns}). */
const ENCODED_VALUES = new Map<string, EncodedValuePatterns>();

/**
 * What follows a separator encoded `depth` times more than once (`''` for `%3D`, `'25'` for `%253D`): encoded
 * spaces, then a value in encoded quotes (`%22…%22`, an escaped quote `%5C%22` inside it) up to its closing quote,
 * or a bare value up to a delimiter, plain or encoded as deep or less deep (`&`, `%26`, `%2C`; `%2520` is a space
 * inside the value).
 */
function encodedValuePatterns(depth: string): EncodedValuePatterns {
  let patterns = ENCODED_VALUES.get(depth);
  if (patterns === undefined) {
    const here = `%${depth}`;
    const upTo = `%(?:25){0,${depth.length / 2}}`;
    const delimiter = `${upTo}(?:0[9ADad]|2[0267Cc9]|3[BbCcEe]|5[Dd]|7[Dd])`;
    const quoted = String.raw`${here}(2[27])((?:${here}5[Cc]${here}\2|(?!${upTo}\2)[^\s"'&<>\\])*)(${here}\2)?`;
    // An escape is one part, so that a value cut at JUDGED_PARTS still decodes.
    const barePart = String.raw`(?:\[REDACTED\]|\\+(?![\\"'])|(?!${delimiter})(?:%[0-9A-Fa-f]{2}|[^\s"',;&<>)}\]\\]))`;
    patterns = {
      value: new RegExp(`((?:${here}20)*)(?:${quoted}|(${barePart}{1,${JUDGED_PARTS}}))`, 'y'),
      rest: new RegExp(`${barePart}*`, 'y'),
    };
    ENCODED_VALUES.set(depth, patterns);
  }
  return patterns;
}

function encodedValue(text: string, at: number, name: string, depth: string): FoundValue | undefined {
  const patterns = encodedValuePatterns(depth);
  patterns.value.lastIndex = at;
  const found = patterns.value.exec(text);
  if (found === null) return undefined;
  const [judged, spaces = '', quote, quoted, closing = '', bare] = found;
  if (!isSecretValue(name, percentDecoded(quoted ?? judgedPart(bare), depth.length / 2 + 1))) return undefined;
  return {
    length: valueLength(judged, bare, patterns.rest, text, at),
    shown: quote === undefined ? `${spaces}${REDACTED}` : `${spaces}%${depth}${quote}${REDACTED}${closing}`,
  };
}

const ESCAPES_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/** `text` percent-decoded `times` times, each run of escapes as far as it decodes: a value is judged as it was written. */
function percentDecoded(text: string, times: number): string {
  let out = text;
  for (let i = 0; i < times && out.includes('%'); i++) out = out.replace(ESCAPES_RUN, decodedRun);
  return out;
}

function decodedRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    // Not UTF-8 (a byte of another encoding, a character cut in two): left as it is.
    return run;
  }
}

/** Whether `text` is base64 of a `user:password`, as Basic authorisation sends it: printable text with a colon. */
function isBasicCredential(text: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 === 1) return false;
  try {
    return /^[^\p{C}]*:[^\p{C}]*$/u.test(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(text, 'base64')));
  } catch {
    return false;
  }
}

/**
 * Replaces every credential in `text` with `[REDACTED]`, keeping the text
 * around it: provider tokens by their shape (the gitleaks rule set, see
 * `secret-rules.ts`), `Bearer`/`Basic` credentials, passwords in URLs
 * (`scheme://user:password@host`, `@` and `/` in the password included), and
 * values assigned to names that hold secrets, in any casing and syntax
 * (`DB_PASS=…`, `"token": "…"`, `Password=…;` in connection strings,
 * `aws_secret_access_key = …`, `--password …`). Names such as `password` or
 * `secret` have any value redacted; names such as `key` or `token` only values
 * that look generated (length, mixed characters, entropy), so `max_tokens=1000`
 * or `primary key: id` stay as they are.
 *
 * Every sink that writes outside the process (logs, span attributes and events,
 * metric attributes, error messages, CLI output, reports) goes through this.
 */
export function redact(text: string): string {
  return mayHoldSecret(text) ? redactByRules(text) : text;
}

/**
 * {@link redact} for a text meant as a URL that did not parse, to quote it
 * in an error: everything from after the scheme's `//` to the last `@` goes
 * (user and password), since an unencoded password may hold any character,
 * `#`, `?` and `/` included, and then the rules cannot tell where it ends;
 * and so does what follows a `?` or `#` after that, a query's token
 * (`?key=…`) being no shape the rules know. A value of 16 characters or
 * more with neither a dot nor a slash is no host or path but a key pasted
 * in the wrong place (a hex token, a provider's key of a shape the rules do
 * not know): it goes whole.
 */
export function redactUnparsedUrl(text: string): string {
  const at = text.lastIndexOf('@');
  const from = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0].length ?? 0;
  const kept = at < from ? text : `${text.slice(0, from)}${REDACTED}${text.slice(at)}`;
  const query = kept.search(/[?#]/);
  const shown = query === -1 ? kept : `${kept.slice(0, query + 1)}…`;
  const rest = shown.slice(from);
  if (rest.length >= 16 && !/[./]/.test(rest)) return `${shown.slice(0, from)}${REDACTED}`;
  return redact(shown);
}

/**
 * {@link redact} without its pre-check: every rule run over the text. What
 * the pre-check must agree with, and what its tests compare it to.
 */
export function redactByRules(text: string): string {
  // Before the token rules, which would leave the secret without the key id that shows what it is.
  let out = text.replace(AWS_KEY_PAIR, (match, _id: string, separator: string, secret: string) =>
    /[a-z]/.test(secret) && /[A-Z]/.test(secret) ? `${REDACTED}${separator}${REDACTED}` : match,
  );
  for (const rule of TOKEN_RULES) {
    out = out.replace(rule.pattern, (_match, prefix?: unknown) => (typeof prefix === 'string' ? `${prefix}=${REDACTED}` : REDACTED));
  }
  out = redactCutPrivateKeys(out, REDACTED);
  out = out.replace(AUTH_SCHEME, (match, scheme: string, space: string, credentials: string) =>
    (credentials.length >= 8 && /[0-9._~+/=%-]/.test(credentials)) || (/^basic$/i.test(scheme) && isBasicCredential(credentials))
      ? `${scheme}${space}${REDACTED}`
      : match,
  );
  out = out.replace(AUTHORIZATION, (match, before: string, credentials: string) =>
    isSecretValue('authorization', credentials) ? `${before}${REDACTED}` : match,
  );
  out = out.replace(URL_USERINFO, (match, user: string, password: string | undefined) => {
    // A user that looks generated is a token too, with a password or a placeholder for one (`<token>:x-oauth-basic@`).
    const shownUser = isSecretValue('token', user) ? REDACTED : user;
    if (password === undefined) return shownUser === user ? match : `://${REDACTED}@`;
    return `://${shownUser}:${REDACTED}@`;
  });
  out = redactAssignments(out);
  out = redactNamedValues(out);
  out = out.replace(XML_ELEMENT, (match, name: string, attributes: string | undefined, value: string) =>
    isSecretValue(name, value.trim()) ? `<${name}${attributes ?? ''}>${REDACTED}</${name}>` : match,
  );
  out = out.replace(FLAG, (match, flag: string, separator: string, value: string) =>
    // `-pSecret`: a one-letter option with its value joined (`mysql -pSecret shop`), not a name that ends in a word.
    !JOINED_SHORT_OPTION.test(flag) && isSecretValue(flag, value) ? `${flag}${separator}${REDACTED}` : match,
  );
  out = redactCommandLineCredentials(out, REDACTED);
  out = redactKeywordCredentials(out, REDACTED);
  return out;
}

/** How deep {@link redactValue} copies; a subtree below becomes redacted JSON text. */
const MAX_COPY_DEPTH = 12;
/** Longest JSON text a subtree below {@link MAX_COPY_DEPTH} becomes. */
const MAX_DEEP_TEXT = 2000;
/** Values of such a subtree rendered at most: ample for the text. */
const MAX_DEEP_VALUES = 1000;
/**
 * Values of all such subtrees of one value rendered at most: a tree that
 * shares objects repeats them at every level, and would otherwise cost work
 * exponential in its depth.
 */
const MAX_DEEP_VALUES_IN_ALL = 20_000;
/** What stands for an object inside itself. */
const CIRCULAR = '[Circular]';
/** What stands for the values of a deep subtree past {@link MAX_DEEP_VALUES}. */
const OMITTED = '…';

/**
 * Deep-copies a value for a sink: strings are redacted with {@link redact}, and
 * values under keys that name a secret (`password`, `apiKey`, `token`, …) are
 * replaced whole (for `key`/`token`-like names only when the value looks
 * generated, so `inputTokens: 12` stays). Binary data becomes its size, and an
 * object inside itself `[Circular]`. Past 12 levels a subtree becomes its JSON
 * text (at most 2,000 characters), redacted by the same rules: nothing of the
 * value goes out unredacted, however deep it sits.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  return copyRedacted(value, depth, { ancestors: [], deepValues: MAX_DEEP_VALUES_IN_ALL });
}

interface CopyState {
  /** The objects being copied above the current one, to spot cycles (a shared object is copied each time). */
  readonly ancestors: object[];
  /** What is left of {@link MAX_DEEP_VALUES_IN_ALL}. */
  deepValues: number;
}

function copyRedacted(value: unknown, depth: number, state: CopyState, key: string | number = ''): unknown {
  const { ancestors } = state;
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (ancestors.includes(value)) return CIRCULAR;
  if (depth > MAX_COPY_DEPTH) return deepText(value, state);
  // What JSON.stringify would write (a Date's ISO text, a URL's href) rather than its own properties, often none.
  const json = jsonOf(value, key);
  if (json !== value) return copyRedacted(json, depth, state, key);
  ancestors.push(value);
  try {
    if (value instanceof Map) return copyRedacted(Object.fromEntries(value), depth, state);
    if (Array.isArray(value)) return value.map((v, i) => copyRedacted(v, depth + 1, state, i));
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value);
    const entryName = namedEntry(entries);
    for (const [k, v] of entries) {
      const secret = secretUnderKey(k, v) || (entryName !== undefined && isValueKey(k) && secretUnderKey(entryName, v));
      const shown = secret ? REDACTED : copyRedacted(v, depth + 1, state, k);
      // A plain key is unchanged, and no other key can redact to it: a redacted key holds a bracket.
      if (PLAIN_KEY.test(k) && k !== '__proto__') out[k] = shown;
      else setKey(out, uniqueKey(out, redact(k)), shown);
    }
    return out;
  } finally {
    ancestors.pop();
  }
}

/** `toJSON()`'s result where a value has one (as JSON.stringify calls it); the value itself when it has none or it throws. */
function jsonOf(value: object, key: string | number): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== 'function') return value;
  try {
    return toJSON.call(value, String(key)) as unknown;
  } catch {
    return value;
  }
}

/**
 * The name of an entry written as `{ name: "DB_PASSWORD", value: "…" }` or
 * `{ key: …, value: … }` (a Kubernetes env list, a settings table) when that
 * name may hold a secret: its value is then judged by that name, as the text
 * rule for the same entry judges it.
 */
function namedEntry(entries: ReadonlyArray<readonly [string, unknown]>): string | undefined {
  let name: string | undefined;
  let hasValue = false;
  for (const [k, v] of entries) {
    if (isValueKey(k)) hasValue = true;
    else if (k.length <= 4 && typeof v === 'string' && /^(?:name|key)$/i.test(k)) name = v;
  }
  return hasValue && name !== undefined && nameSays(name) !== 'no' ? name : undefined;
}

function isValueKey(key: string): boolean {
  return key.length === 5 && key.toLowerCase() === 'value';
}

/** A short key of word characters (`role`, `toolCallId`): shorter than any token shape, and holding no URL or assignment. */
const PLAIN_KEY = /^[\w$]{0,14}$/;

/** {@link redact} for an object's key, at once for the keys most objects have. */
function redactKey(key: string): string {
  return PLAIN_KEY.test(key) ? key : redact(key);
}

/** An object whose keys are redacted: the same object when no key needed it, so that most subtrees are not copied. */
function withRedactedKeys(value: object): object {
  if (Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every((k) => redactKey(k) === k)) return value;
  const out: Record<string, unknown> = {};
  for (const k of keys) setKey(out, uniqueKey(out, redactKey(k)), (value as Record<string, unknown>)[k]);
  return out;
}

/** Sets a key as an own property, `__proto__` too (an own key of parsed JSON), which assignment would take for the prototype. */
function setKey(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/** `key`, or, when redaction made it equal to a key already written, the same with a number after it, so no value is lost. */
function uniqueKey(out: Record<string, unknown>, key: string): string {
  if (!Object.hasOwn(out, key)) return key;
  let n = 2;
  while (Object.hasOwn(out, `${key} (${n})`)) n++;
  return `${key} (${n})`;
}

/**
 * A subtree too deep to copy, as JSON text redacted value by value with the
 * rules of {@link redactValue}: text cannot nest any deeper in a sink.
 * Redacting before clipping means a cut never leaves half a secret
 * unrecognised.
 * @param state the objects above the subtree (cycles inside it too) and the values left to render
 */
function deepText(value: object, state: CopyState): string {
  const outer = state.ancestors;
  // The objects from the subtree's root down to the holder of the value at hand, as written (`shown`) and as given.
  const shown: object[] = [];
  const given: object[] = [];
  let values = 0;
  const json = JSON.stringify(value, function (this: unknown, key: string, v: unknown): unknown {
    if (++values > MAX_DEEP_VALUES || --state.deepValues < 0) return OMITTED;
    // toJSON has run before this sees the value: a Buffer would arrive as its bytes. Look at what the holder holds.
    const holder = this as Record<string, unknown> | undefined;
    const held = holder?.[key];
    if (held instanceof Uint8Array) return `[${held.byteLength} bytes]`;
    if (key !== '' && secretUnderKey(key, v)) return REDACTED;
    if (isValueKey(key) && holder !== undefined && !Array.isArray(holder)) {
      const entryName = namedEntry(Object.entries(holder));
      if (entryName !== undefined && secretUnderKey(entryName, v)) return REDACTED;
    }
    if (typeof v === 'string') return redact(v);
    if (typeof v === 'bigint') return v.toString();
    if (v === null || typeof v !== 'object') return v;
    if (v instanceof Uint8Array) return `[${v.byteLength} bytes]`;
    // JSON.stringify calls this with the holder as `this`: unwinding to it leaves the path from the subtree's root.
    while (shown.length > 0 && shown.at(-1) !== this) {
      shown.pop();
      given.pop();
    }
    if (given.includes(v) || outer.includes(v)) return CIRCULAR;
    const written = withRedactedKeys(v instanceof Map ? Object.fromEntries(v) : v);
    shown.push(written);
    given.push(v);
    return written;
  });
  return json.length > MAX_DEEP_TEXT ? `${json.slice(0, MAX_DEEP_TEXT)}…` : json;
}

/**
 * @deprecated Use {@link redact}; kept as an alias.
 */
export const redactSecrets: (text: string) => string = redact;
