/**
 * Breaker options that take code (an object, a function), which a `--config`
 * JSON file cannot hold: what a command says of them.
 */
const CODE_ONLY = ['store', 'now'] as const;

/**
 * Why `options`, read from the JSON file shown as `shown`, cannot be used
 * (`undefined` when they can): it sets an option that takes code.
 * `storeInstead` says what the command offers in place of `store`.
 */
export function codeOnlyOptionProblem(options: Readonly<Record<string, unknown>>, shown: string, storeInstead: string): string | undefined {
  const key = CODE_ONLY.find((name) => Object.hasOwn(options, name));
  if (key === undefined) return undefined;
  const instead = key === 'store' ? `it takes a store object; ${storeInstead}` : 'it takes a clock function; leave it out';
  return `--config ${shown}: "${key}" cannot be set in a JSON file: ${instead}`;
}

/** An unknown option's message, its list of known options without those a JSON file cannot set. */
export function withoutCodeOnly(message: string): string {
  return message.replace(
    /\(known: ([^)]*)\)$/,
    (_, known: string) =>
      `(known: ${known
        .split(', ')
        .filter((key) => !(CODE_ONLY as readonly string[]).includes(key))
        .join(', ')})`,
  );
}
