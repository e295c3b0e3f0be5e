import { OUTPUT_LABEL } from './output-label.ts';
import { textHash } from './tokenize.ts';

/**
 * Where a ten- or thirteen-digit number reads as an epoch time: right after a
 * key or word that names a time (`"created_at": `, `"ts":`, `iat=`,
 * `X-RateLimit-Reset: `, `updatedAt`, `since `). Elsewhere such a number is a
 * count or an id (`"bytes_copied":1715470336`, `"item_id": "1917064388"`),
 * which is news when it changes. Words sharing an ending are grouped, and the
 * separator has one reading, because the key is matched backwards, alternative
 * by alternative, on every such number.
 */
const EPOCH_KEY =
  /(?:(?:^|[^A-Za-z])(?:at|ts|exp|iat|nbf)|At|Ts|(?:[Cc]reat|[Uu]pdat|[Mm]odifi|[Dd]elet|[Ss]tart|[Ee]nd|[Ff]inish)ed|(?:[Tt]im|[Dd]at|[Ss]inc)e|[Tt]imestamp|[Ee]xpir(?:es?|y|ation)|TIME(?:STAMP)?|DATE|[Ee]poch|[Rr]eset|[Uu]ntil|[Ss]een|[Hh]eartbeat|[Dd]eadline|[Ww]hen)["']?[:=>\s]\s?["']?/;

/** Words after which a number of whole seconds is a measured or waited time. */
const TIMING_WORD = /\b(?:[Tt]ook|[Ee]lapsed|in|[Aa]fter|[Dd]uration|[Ll]atency|[Tt]ime|[Rr]untime|[Ww]aited)[:=\s]\s?/;

/** Seconds as a unit: "3s", "3 sec", "3 seconds". */
const SECONDS = /\s?(?:s|secs?|seconds?)\b/;

/** A time followed by "of 600", "/ 600", "out of 600": a position in a job, which is progress. */
const NOT_PROGRESS = /(?!\s*(?:(?:out )?of|\/)\s*\d)/;

/** Volatile parts (see VOLATILE) that any text may hold. */
const VOLATILE_PARTS = [
  /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/, // timestamp
  /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/, // UUID
  /0[xX][0-9a-fA-F]{6,}\b/, // address
  // epoch seconds or milliseconds after a time key; seconds with a fraction (Python's time.time()) anywhere
  // (the key is looked for behind the number once it is read, rather than at every position of the text)
  new RegExp(`1[5-9]\\d{8}(?:\\.\\d{3,}\\b|(?<=${EPOCH_KEY.source}\\d{10})(?:\\d{3})?\\b)`),
  // duration: below a second it is a timing ("12 ms", "(11 tests) 28ms"); in seconds, when it has a fraction
  // ("passed in 4.84s", "Time elapsed: 0.0056 sec.") or follows a timing word ("took 3 seconds"); never "30 seconds of 600"
  // (a unit is read before the timing word is looked for behind the number)
  new RegExp(
    `\\d+(?:(?:\\.\\d+)?\\s?(?:ms|µs|us|ns)\\b|\\.\\d+${SECONDS.source}|(?=${SECONDS.source})(?<=${TIMING_WORD.source}\\d+)${SECONDS.source})${NOT_PROGRESS.source}`,
  ),
  // IPython's cell counter, one more on every run: in a traceback ("Cell In[12], line 3", "<ipython-input-12-…>"), a prompt ("Out[12]:")
  /(?:Cell|Input) In ?\[\d+\]|(?:In|Out) ?\[\d+\]:|ipython-input-\d+-[0-9a-f]+/,
  // a generated hex id under a label of its own, as a tool's output header gives one for every run ("Chunk ID: c0eadb"
  // of Codex's exec_command): letters and digits both, so a number ("Order ID: 104233") stays news; the whole value, so
  // the start of a longer one ("Request ID: 1b2c3d4e-…", a UUID) is left to the id rules below
  /[A-Z][a-z]{1,20} ID: (?=[0-9a-f]{0,31}[a-f])(?=[0-9a-f]{0,31}\d)[0-9a-f]{6,32}(?![\w-])/,
  // a generated hex id of 12 to 32 characters, letters and digits both, after a word that names something a run
  // creates anew ("container 3f2a9c1e7b10", "job=…", "session: …"); a hex digest, whole or cut ("commit 9fceb02…",
  // "screenshot 5d41402abc4b…", "sha256 …"), names what the result is about and stays (the first character is
  // read before the word behind it is looked for: an alternative that opens with a character rather than a
  // lookaround is turned away at most words by that character alone)
  /(?:[a-f](?=[0-9a-f]{0,30}\d)|\d(?=[0-9a-f]{0,30}[a-f]))(?<=\b(?:[Cc]ontainer|CONTAINER|[Ii]nstance|[Ss]ession|[Rr]un|[Jj]ob|[Tt]ask|[Ww]orker|[Ee]xecution|[Dd]eployment|[Pp]od|[Ss]andbox)(?:[ _-]?(?:[Ii][Dd]))?[ :=#]{1,3}[0-9a-f])[0-9a-f]{11,31}(?![\w-])/,
  // `time`'s "0m0.412s" and a clock or elapsed time ("12:30:45", "0:00:03.21"), but not a position in a job ("of 1:30:00")
  new RegExp(`\\d{1,4}m\\d{1,2}(?:\\.\\d+)?s\\b|\\d{1,2}:\\d{2}:\\d{2}(?:[.,]\\d+)?\\b${NOT_PROGRESS.source}`),
  // a temporary directory named anew on every run: Python's tempfile (/tmp/tmpk3j_x9a2), pytest's numbered ones, macOS's
  /tmp(?<=\/tmp)[a-z0-9_]{8}(?![\w.-])|pytest-\d+\b|var\/folders\/\w{2}\/\w+\/T\b/,
  // a process id ("pid=48213", "PID 48213", "Started server process [48213]"), but not "process 3 of 10"
  new RegExp(`(?:pid|PID|Pid)\\b[\\s:=#]{0,3}\\d{2,7}\\b|process \\[?\\d{3,7}\\b${NOT_PROGRESS.source}`),
  // a port on loopback of five digits, as a test server given port 0 or a random one prints it (not 8080 or 5432)
  /(?:localhost|127\.0\.0\.1|0\.0\.0\.0):[1-6]\d{4}\b/,
];

/** A bare request id as OpenAI, Anthropic and Stripe print it ("Request req_1A2b3C4d5E6f7G: No such customer"). */
const BARE_REQUEST_ID = /req_(?=[a-z]*[0-9A-Z])[0-9A-Za-z]{12,}\b/;

/**
 * A request, trace or correlation id and its value: after `:` or `=`
 * ("x-github-request-id: B6F7:…", "traceId":"…", "(Request ID: req_…)"), or
 * after a space when the value looks like an id ("include the request ID
 * req_… in", "request id 9f86d081884c7d65"); a bare trace followed by a hex
 * id ("trace 4bf92f3577b34da6a3ce929d0e0e4736"). It may start anywhere in a
 * word, so it is tried at every word of a text: the costliest part, and only
 * ever matched where one of ID_WORDS is. What comes before the word in its key
 * (`x-github-`, `X_Amzn_`) is bounded, so that a long word of hyphenated parts
 * is not read again from each part.
 */
const ID_PART =
  /[\w-]{0,64}(?:[Rr]equest|REQUEST|[Tt]race|TRACE|[Cc]orrelation|CORRELATION|[Ss]pan|SPAN)(?:[-_ ]?(?:[Ii][Dd])["']?(?:\s*[:=]\s*["']?[\w:./+=-]+|\s+(?=[\w:./+=-]*\d)[\w:./+=-]{8,})|(?:\s*[:=]\s*|\s+)["']?[0-9a-fA-F]{16,}\b)/;

/** What a text must hold for ID_PART to match in it (a superset: case is ignored). */
const ID_WORDS = /request|trace|correlation|span/i;

/**
 * One pattern with alternatives, so a result is searched once rather than
 * once per kind. Every alternative starts with a word character or a dash:
 * saying so up front turns away the boundary at each word's end at once,
 * instead of trying every alternative there (the same matches, ~10 % faster).
 */
function volatilePattern(parts: readonly RegExp[]): RegExp {
  return new RegExp(`\\b(?=[\\w-])(?:${parts.map((p) => p.source).join('|')})`, 'g');
}

/**
 * Parts of a tool result that change on every call without carrying news:
 * timestamps, UUIDs, memory addresses, epoch times, elapsed durations,
 * IPython cell counters, request and trace ids. A status poll that differs
 * only in these returned nothing new. A text without any of ID_WORDS is
 * searched without ID_PART, which cannot match in it: the same replacements,
 * in about half the time.
 */
const VOLATILE = volatilePattern([...VOLATILE_PARTS, ID_PART, BARE_REQUEST_ID]);
const VOLATILE_WITHOUT_IDS = volatilePattern([...VOLATILE_PARTS, BARE_REQUEST_ID]);

/**
 * Whitespace that collapsing changes: runs, and single characters other than
 * a space. A lone space is left alone, which saves a replacement per word.
 * Every match starts with one whitespace character, looked at once: written
 * as two alternatives (`\s\s+|[^\S ]`), each space of the text was tried
 * twice.
 */
const WHITESPACE = /\s(?:\s+|(?<=[^\S ]))/g;

/** Results up to this long are hashed whole; the hash of a longer one reads evenly spaced windows of it. */
const MAX_WHOLE_CHARS = 262_144;
/** Windows of a longer result hashed, and their length: about 128 KB read of any result. */
const WINDOWS = 64;
const WINDOW_CHARS = 2048;

/** A result with its volatile parts replaced and whitespace collapsed. */
export function normalizeResult(text: string): string {
  return text
    .replace(ID_WORDS.test(text) ? VOLATILE : VOLATILE_WITHOUT_IDS, '#')
    .replace(WHITESPACE, ' ')
    .trim();
}

/**
 * Hash of a tool result after {@link normalizeResult}; `0` for an empty or
 * missing result (no information). A result is hashed whole up to 256 KB, so
 * a status whose progress sits in the middle of a long output is news when
 * it moves; a longer one by its length and 64 evenly spaced windows of 2 KB
 * (the first at its start, the last at its end), so cost stays bounded.
 */
export function resultHash(result: string | null | undefined): number {
  if (result === null || result === undefined) return 0;
  const normalized = normalizeResult(result.length > MAX_WHOLE_CHARS ? sampled(result) : result);
  return normalized === '' ? 0 : textHash(normalized) || 1;
}

function sampled(result: string): string {
  const stride = (result.length - WINDOW_CHARS) / (WINDOWS - 1);
  const parts = [String(result.length)];
  for (let w = 0; w < WINDOWS; w++) {
    const start = Math.round(w * stride);
    parts.push(result.slice(start, start + WINDOW_CHARS));
  }
  return parts.join('\u0000');
}

const TRANSIENT =
  /(?<!\b(?:line|port|id|no|#)\s?|[$#.,:-])\b(?:429|50[0-4])\b(?![.,:]\d|\s?(?:ms|µs|s|secs?|seconds?|bytes|[kmg]i?b|%|px)(?!\w)|-)|rate[ -]?limit|too many requests|timed? ?out|timeout|temporar(?:il)?y unavailable|service unavailable|bad gateway|gateway time|overloaded|econnreset|econnrefused|etimedout|eai_again|epipe|socket hang up|network error|connection (?:reset|refused|closed|aborted)|try again later/i;

/** Characters read at each end of an error for {@link isTransientError}. */
const TRANSIENT_READ = 300;

/**
 * Whether an error result reads like an outage (HTTP 429/5xx, timeouts, rate
 * limits, dropped connections) rather than a rejection of the request itself.
 * Its start and its end are read: a message says so first, a traceback on its
 * last line. A status code counts as one alone, not as a timing, a size, a
 * line, a port, an id or part of a longer number ("took 502 ms", "line 503").
 */
export function isTransientError(result: string | null | undefined): boolean {
  if (result === null || result === undefined) return false;
  if (TRANSIENT.test(result.slice(0, TRANSIENT_READ))) return true;
  return result.length > TRANSIENT_READ && TRANSIENT.test(result.slice(-TRANSIENT_READ));
}

const ERROR_START = new RegExp(String.raw`^\s*${OUTPUT_LABEL}(?:(?:error|exception|fatal)\b|traceback \(most recent call last\))`, 'i');

/** Whether a result that was not flagged as an error still opens like one. */
export function looksLikeError(result: string | null | undefined): boolean {
  return result !== null && result !== undefined && ERROR_START.test(result.slice(0, 200));
}

/**
 * How tools say that the request itself was malformed: a parameter missing,
 * unknown or not allowed ("Parameter `old_str` is required", "Unknown
 * argument", "1 validation error for …"). An *invalid* value is left out: it
 * is often invalid only given the world ("Invalid `path` parameter: … File
 * already exists"), which other actions can change. Only the opening is read,
 * after an "ERROR:" prefix: a program's own TypeError further down is about
 * the code being run, which edits can change.
 */
const REJECTED_REQUEST = new RegExp(
  `^\\W*${OUTPUT_LABEL}(?:error\\W*)?(?:${[
    /(?:parameter|argument|field|property|option)s? [^.\n]{0,60}?\b(?:is |are )?(?:required|missing|not allowed|not permitted|not supported)\b/,
    /(?:missing|unknown|unexpected|unrecognized|required)\b[^.\n]{0,30}?\b(?:parameter|argument|field|property|option)s?\b/,
    /(?:\d+ )?validation errors? for\b/,
  ]
    .map((p) => p.source)
    .join('|')})`,
  'i',
);

/**
 * Whether an error result says the request itself was malformed rather than
 * that the world refused it. Such a rejection does not depend on anything
 * else the agent does: only changing the request can fix it.
 */
export function isRejectedRequest(result: string | null | undefined): boolean {
  return result !== null && result !== undefined && REJECTED_REQUEST.test(result.slice(0, 300));
}
