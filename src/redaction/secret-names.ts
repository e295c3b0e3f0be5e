import { shannonEntropy } from './entropy.ts';

/**
 * Last words of a name that always hold a secret: any non-empty value is redacted. After the English words, the
 * word for password in the languages of the most used localised sign-in forms: German, Spanish, French (`mot de
 * passe`: its last word), Portuguese, Russian and its neighbours, Chinese, Japanese, Korean.
 */
const ALWAYS_SECRET = new Set([
  'password',
  'passwd',
  'pass',
  'pwd',
  'passphrase',
  'secret',
  'secrets',
  'credential',
  'credentials',
  'pw',
  'passwort',
  'kennwort',
  'contraseña',
  'contrasena',
  'passe',
  'senha',
  'пароль',
  '密码',
  '密碼',
  'パスワード',
  '비밀번호',
]);
/** Last words of a name that often hold a secret: values that look random are redacted. */
const OFTEN_SECRET = new Set(['key', 'token', 'auth', 'authorization', 'jwt', 'sig', 'signature', 'cookie', 'apikey', 'dsn', 'sas']);
/**
 * A single word ending like this (`dbpassword`, `accesstoken`, `apikey`); German and the scripts written without
 * spaces join words the same way (`Datenbankpasswort`, `数据库密码`).
 */
const ALWAYS_SUFFIX = /(?:password|passwd|secret|passwort|kennwort|密码|密碼|パスワード|비밀번호)$/i;
const OFTEN_SUFFIX = /(?:apikey|token|accesskey|secretkey|privatekey)$/i;

/** Also already redacted: `[REDACTED]…`, and a URL whose password the URL rule replaced (the rest of it is no secret). */
const NOT_A_VALUE =
  /^(?:null|nil|none|true|false|undefined|\*+|x+|\[REDACTED\].*|[a-z][a-z0-9+.-]*:\/\/[^\s:/@?#]*:\[REDACTED\]@\S*|\$\{?[A-Za-z_]\w*\}?|<[^>]*>|\{\{.*\}\})$/i;

/**
 * Words and small numbers joined by `_`, `-`, `.`, `:` or `/`: an identifier
 * or a path (`account_id`, `created_at_2024`, `user:1234:profile`,
 * `id_ed25519.pub`), which people write, not a generated key, whose
 * characters change case and kind at random.
 */
const WORDS_JOINED = /^(?:(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)\d{0,6}|\d{1,6})(?:[_.:/-]+(?:(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)\d{0,6}|\d{1,6}))*$/;
/** Where a path starts: home, relative or absolute. */
const PATH_START = /^(?:~|\.\.?)?\/+\.?/;

/** A name's words, in any script: split at what is not a letter or a digit, and where camelCase starts a word. */
function words(name: string): string[] {
  return name
    .split(/[^\p{L}\p{M}\p{N}]+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})/u)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

/**
 * How sure we are, from its name alone, that a value is a secret: by the
 * name's last word (`db_password`, `api_key`), or, for a name that only
 * contains a password or secret word (`SECRET_KEY_BASE`, `password_hash`),
 * as sure as for a key.
 */
export function nameSays(name: string): 'always' | 'often' | 'no' {
  // The shell's working directory, not a password: what a dump of the environment shows first.
  if (name === 'PWD') return 'no';
  const all = words(name);
  const word = all.at(-1) ?? '';
  if (ALWAYS_SECRET.has(word) || ALWAYS_SUFFIX.test(word)) return 'always';
  if (OFTEN_SECRET.has(word) || OFTEN_SUFFIX.test(word)) return 'often';
  if (all.some((w) => ALWAYS_SECRET.has(w) || ALWAYS_SUFFIX.test(w))) return 'often';
  return 'no';
}

/**
 * Code, not a generated value (`keys[idx]`, `hash(input)`, `` `${prefix}:${id}` ``, `config.apiKey`,
 * `process.env.API_KEY`): a name called or indexed, a template, or a member path of names without digits inside
 * them. Generated keys are base64, hex or base58 with `-`, `_` and `.` at most, and their parts hold digits.
 */
const CODE = /[A-Za-z_$][([]|\$\{|`|^[A-Za-z_$][A-Za-z_$]*\d{0,3}(?:\.[A-Za-z_$][A-Za-z_$]*\d{0,3})+$/;

/** A value that could be a generated key or token: long enough, varied, not a plain word, an identifier, a path or code. */
function looksRandom(value: string): boolean {
  if (value.length < 8) return false;
  if (!/[0-9]/.test(value) && !/[^A-Za-z0-9]/.test(value) && !(/[a-z]/.test(value) && /[A-Z]/.test(value))) return false;
  if (WORDS_JOINED.test(value.replace(PATH_START, '')) || CODE.test(value)) return false;
  return shannonEntropy(value) >= 3;
}

/**
 * `OAuth2-based`, `k8s-managed`: a word, then lower-case words of three letters or more, is a compound adjective (a
 * password with a short word after a hyphen, `S3cr3t-pw`, is none).
 */
const COMPOUND_WORD = /^[\p{L}\p{N}]+(?:-\p{Ll}{3,})+$/u;

/**
 * A word written as a password, as a sentence gives one (`the password is hunter2`): letters with digits or symbols
 * among them. Not a plain word (`the password is incorrect`), a number (`is 8 characters long`), an identifier or a
 * path (`is DB_PASSWORD`, `is sha256-hashed`, `is OAuth2-based`), a URL or a placeholder, which a sentence about a password holds as
 * often as a password.
 */
export function looksLikePassword(value: string): boolean {
  if (value.length < 6 || NOT_A_VALUE.test(value) || value.includes('://')) return false;
  if (!/\p{L}/u.test(value) || !/[^\p{L}]/u.test(value) || PATH_START.test(value)) return false;
  return !(/[_.:/-]/.test(value) && (WORDS_JOINED.test(value) || COMPOUND_WORD.test(value)));
}

/** Whether `value`, assigned to `name`, is a secret to redact. */
export function isSecretValue(name: string, value: string): boolean {
  const says = nameSays(name);
  if (says === 'no' || value === '' || NOT_A_VALUE.test(value)) return false;
  return says === 'always' || looksRandom(value);
}

/** Whether the value of an object's key is a secret to redact whole. */
export function secretUnderKey(key: string, value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  const says = nameSays(key);
  if (says === 'always') return typeof value !== 'string' || !NOT_A_VALUE.test(value);
  if (says === 'often') return typeof value === 'string' ? isSecretValue(key, value) : false;
  return false;
}
