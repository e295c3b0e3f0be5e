import type { ParseArgsOptionsConfig } from 'node:util';

/** A negative number: parseArgs takes `-5` after an option for another option, not for its value. */
const NEGATIVE_NUMBER = /^-\.?\d/;

/**
 * `argv` with a negative number after an option that takes a value joined to
 * it (`--timeout -5` as `--timeout=-5`), so that the option's own check says
 * what range it takes, rather than parseArgs advising a dash-less value.
 */
export function withNegativeValues(argv: readonly string[], options: ParseArgsOptionsConfig): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : /^-[^-]$/.test(arg) ? Object.keys(options).find((key) => options[key]?.short === arg[1]) : undefined;
    const next = argv[i + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(`--${name}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
