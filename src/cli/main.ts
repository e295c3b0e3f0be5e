import { readFileSync } from 'node:fs';
import { styleText } from 'node:util';
import { EXIT_CODES } from './cli-command.ts';
import { COMMANDS } from './commands.ts';
import { didYouMean } from './did-you-mean.ts';
import { printable, terminalText } from '../redaction/terminal-text.ts';
import type { CliIO } from './progress.ts';

/** The package version, read from the package.json two levels up (from `src/cli/` and from `dist/cli/`). */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `governor — govern AI agents: a circuit breaker for loops, and a limited agent harness.

Usage: governor <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

  governor help <command>    the options of a command (also: governor <command> --help)
  governor --version         print the version

Results go to stdout; progress and errors to stderr.
Exit codes: ${EXIT_CODES.ok} success, ${EXIT_CODES.failure} the run or command did not succeed, ${EXIT_CODES.usage} usage error,
            ${EXIT_CODES.interrupted} interrupted (Ctrl-C), ${EXIT_CODES.terminated} terminated (SIGTERM).
Colour only on a terminal, never with NO_COLOR set.`;
}

/** "governor:" in red, when the stream is a terminal that wants colour (honours NO_COLOR, FORCE_COLOR, TERM=dumb). */
function errorPrefix(io: CliIO): string {
  const stream = io.stderr as CliIO['stderr'] & { hasColors?: (env: object) => boolean };
  const colour = stream.isTTY === true && typeof stream.hasColors === 'function' && stream.hasColors(io.env);
  return colour ? styleText('red', 'governor:', { validateStream: false }) : 'governor:';
}

function unknownCommand(name: string, io: CliIO): number {
  const guess = didYouMean(
    name,
    COMMANDS.map((c) => c.name),
  );
  io.stderr.write(
    `${errorPrefix(io)} unknown command "${terminalText(name)}".${guess ? ` Did you mean "governor ${guess}"?` : ''}\nRun "governor --help" for the list of commands.\n`,
  );
  return EXIT_CODES.usage;
}

/** `--help`/`-h` among a command's own arguments (not after `--`, not as part of a quoted task). */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** Dispatches a `governor` command line; resolves to the exit code. */
async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(`${helpText()}\n`);
    return EXIT_CODES.usage;
  }
  if (first === '--help' || first === '-h') {
    io.stdout.write(`${helpText()}\n`);
    return EXIT_CODES.ok;
  }
  if (first === '--version' || first === '-v' || first === '-V' || first === 'version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT_CODES.ok;
  }
  if (first === 'help') {
    const [topic] = rest;
    if (topic === undefined) {
      io.stdout.write(`${helpText()}\n`);
      return EXIT_CODES.ok;
    }
    const command = COMMANDS.find((c) => c.name === topic);
    if (!command) return unknownCommand(topic, io);
    io.stdout.write(`${command.usage}\n`);
    return EXIT_CODES.ok;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (!command) return unknownCommand(first, io);
  if (asksForHelp(rest)) {
    io.stdout.write(`${command.usage}\n`);
    return EXIT_CODES.ok;
  }
  return command.run(rest, io);
}

/**
 * Runs the CLI in this process: `process.argv`, the standard streams, and the
 * exit code. A reader that closes our stdout early (`governor replay … | head`)
 * ends the output quietly instead of with a stack trace.
 */
export async function runCli(): Promise<void> {
  const quietOnClosedPipe = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'EPIPE') throw error;
  };
  process.stdout.on('error', quietOnClosedPipe);
  process.stderr.on('error', quietOnClosedPipe);
  const io: CliIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
  try {
    process.exitCode = await main(process.argv.slice(2), io);
  } catch (error) {
    io.stderr.write(`${errorPrefix(io)} ${printable(error instanceof Error ? error.message : String(error))}\n`);
    process.exitCode = EXIT_CODES.failure;
  }
}
