/** A JSON object (not null, not an array): what a parsed state, operation or part of one must be before its fields are read. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
