/**
 * Argument fields that name *what* a call acts on (a file, a record, a page, a
 * position, a date). Two calls that differ in one of these are different calls
 * however similar the rest is: page 2 is not page 1, another file is another
 * file. Matching is on the last non-index segment of a field's path, after
 * camelCase and kebab-case are folded to snake_case.
 */
export const DEFAULT_IDENTITY_KEYS: readonly string[] = [
  'id',
  'ids',
  'uuid',
  'guid',
  'key',
  'name',
  'email',
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'filepath',
  'dir',
  'directory',
  'folder',
  'page',
  'offset',
  'cursor',
  'after',
  'before',
  'since',
  'until',
  'from',
  'to',
  'line',
  'lines',
  'lineno',
  'start',
  'end',
  'range',
  'url',
  'uri',
  'href',
  'link',
  'date',
  'sku',
  '*_id',
  '*_ids',
  '*_key',
  '*_name',
  '*_path',
  '*_file',
  '*_dir',
  '*_url',
  '*_uri',
  '*_date',
  '*_number',
  '*_page',
  '*_offset',
  '*_cursor',
  '*_token',
  '*_line',
  '*_range',
  '*_email',
];

/**
 * Argument fields made anew for every attempt of a call, naming nothing it
 * acts on: a retry of a declined payment with a fresh `idempotency_key`, of a
 * failing request with a new `trace_id` or an `attempt` counter, is the same
 * request. Left out when calls are compared (still part of their exact hash:
 * with a new key, a write is a new write). Not `request_id`, which a tool may
 * take as the request to act on.
 */
export const RETRY_KEYS: ReadonlySet<string> = new Set([
  'idempotency_key',
  'nonce',
  'trace_id',
  'span_id',
  'correlation_id',
  'attempt',
  'attempt_number',
  'retry',
  'retries',
  'retry_count',
]);

/** How a field's key is compared: exactly (`identity`), not at all (`retry`, one of RETRY_KEYS), or by its content (`other`). */
export type KeyKind = 'identity' | 'retry' | 'other';

/** Folds `fileName`, `file-name` and `FILE_NAME` to `file_name`. */
export function foldKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[-\s]+/g, '_')
    .toLowerCase();
}

/**
 * Compiled matcher for identity keys. Patterns are exact names or `*_suffix` /
 * `prefix_*` globs, compared after {@link foldKey}.
 */
export class IdentityKeyMatcher {
  private readonly exact = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly prefixes: string[] = [];
  private readonly cache = new Map<string, KeyKind>();

  constructor(patterns: readonly string[] = DEFAULT_IDENTITY_KEYS) {
    for (const raw of patterns) {
      const pattern = foldKey(raw);
      if (pattern.startsWith('*')) this.suffixes.push(pattern.slice(1));
      else if (pattern.endsWith('*')) this.prefixes.push(pattern.slice(0, -1));
      else this.exact.add(pattern);
    }
  }

  /** Whether a field with this (last) key is an identity field. */
  matches(key: string): boolean {
    return this.kind(key) === 'identity';
  }

  /** How a field with this (last) key is compared (see {@link KeyKind}). */
  kind(key: string): KeyKind {
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const folded = foldKey(key);
    // A name given exactly (`identityKeys: ['attempt']`) is an identity key even among the retry keys; a glob
    // (`*_id`, `*_key`) is not meant for them.
    const result: KeyKind = this.exact.has(folded)
      ? 'identity'
      : RETRY_KEYS.has(folded)
        ? 'retry'
        : this.suffixes.some((s) => folded.endsWith(s)) || this.prefixes.some((p) => folded.startsWith(p))
          ? 'identity'
          : 'other';
    if (this.cache.size < 1024) this.cache.set(key, result);
    return result;
  }
}
