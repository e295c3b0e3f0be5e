/** A value as JSON text, or as `String` would write it when it has no JSON form (a BigInt, a cycle, a function). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A tool's output as text: a string as it is, anything else as {@link jsonText}. */
export function outputText(output: unknown): string {
  return typeof output === 'string' ? output : jsonText(output);
}
