const SECRET_RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [REDACTED]'],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g, '[REDACTED]'],
  [/\b(?:gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}/g, '[REDACTED]'],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, '[REDACTED]'],
  [/\bAKIA[0-9A-Z]{16}\b/g, '[REDACTED]'],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, '[REDACTED]'],
  [/\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, '[REDACTED]'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, '[REDACTED]'],
  // user:password@ in URLs
  [/\b([a-z][a-z0-9+.-]*:\/\/[^:\s/@]+:)[^@\s/]+@/gi, '$1[REDACTED]@'],
  // api_key=…, "password": "…" and the like in free text
  [/\b((?:api[_-]?key|access[_-]?token|secret|password|passwd)["']?\s*[:=]\s*["']?)[^"'\s,&;]+/gi, '$1[REDACTED]'],
];

const SECRET_KEY_NAME = /(api[_-]?key|secret|token|password|passwd|authorization|cookie|credential|private[_-]?key)/i;

/** Replaces anything that looks like a credential in a string with `[REDACTED]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_RULES) out = out.replace(pattern, replacement);
  return out;
}

/**
 * Deep-copies a value for logging: strings are redacted, and values under
 * keys that name a secret (apiKey, token, password, …) are replaced whole.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object' || depth > 12) return value;
  if (value instanceof Uint8Array) return `[${value.byteLength} bytes]`;
  if (value instanceof Map) return redactValue(Object.fromEntries(value), depth);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY_NAME.test(key) && v !== undefined && v !== null ? '[REDACTED]' : redactValue(v, depth + 1);
  }
  return out;
}
