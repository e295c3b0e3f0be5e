import { readFileSync } from 'node:fs';
import { getSystemErrorMessage, styleText } from 'node:util';
import { EXIT_CODES } from './cli-command.ts';
import { COMMANDS } from './commands.ts';
import { didYouMean } from '../runtime/did-you-mean.ts';
import { printable } from '../redaction/terminal-text.ts';
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
Exit codes: ${EXIT_CODES.ok} success, ${EXIT_CODES.failure} the run or command did not succeed, ${EXIT_CODES.usage} usage error
            (also an optional package the command needs that is not installed),
            ${EXIT_CODES.interrupted} interrupted (Ctrl-C), ${EXIT_CODES.terminated} terminated (SIGTERM).
Colour only on a terminal, never with NO_COLOR set.`;
}

/** "governor:" in red, when the stream is a terminal that wants colour (honours NO_COLOR, FORCE_COLOR, TERM=dumb). */
function errorPrefix(io: CliIO): string {
  const stream = io.stderr as CliIO['stderr'] & { hasColors?: (env: object) => boolean };
  const colour = stream.isTTY === true && typeof stream.hasColors === 'function' && stream.hasColors(io.env);
  return colour ? styleText('red', 'governor:', { validateStream: false }) : 'governor:';
}

/** The options `governor` itself takes, before any command. */
const TOP_LEVEL_OPTIONS = ['--help', '--version'];

function unknownCommand(name: string, io: CliIO): number {
  // What was typed may be a pasted secret (`governor OPENAI_API_KEY=sk-…`): redacted like every other echo.
  const shown = printable(name);
  if (name.startsWith('-')) {
    const guess = didYouMean(name, TOP_LEVEL_OPTIONS);
    io.stderr.write(
      `${errorPrefix(io)} unknown option "${shown}".${guess ? ` Did you mean "governor ${guess}"?` : ''}\nRun "governor --help" for the options and commands.\n`,
    );
    return EXIT_CODES.usage;
  }
  const guess = didYouMean(
    name,
    COMMANDS.map((c) => c.name),
  );
  io.stderr.write(
    `${errorPrefix(io)} unknown command "${shown}".${guess ? ` Did you mean "governor ${guess}"?` : ''}\nRun "governor --help" for the list of commands.\n`,
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

/** A failed write to stdout or stderr in a few words: "no space left on device", not the errno code and syscall. */
function describeOutputError(error: NodeJS.ErrnoException): string {
  if (typeof error.errno === 'number') {
    try {
      return getSystemErrorMessage(error.errno);
    } catch {
      // Not a system errno (a stream error of Node's own): its message says it.
    }
  }
  return error.message;
}

/**
 * Watches stdout and stderr for write errors. A reader that closes our stdout
 * early (`governor replay … | head`) ends the output quietly; any other error
 * (a full disk, an I/O error) is said once on stderr and makes the exit code 1.
 * Never rethrown: a throw in an 'error' listener is an uncaught exception,
 * whose stack trace is no use to someone whose disk is full.
 */
function watchOutputErrors(io: CliIO): { readonly failed: boolean } {
  const state = { failed: false };
  const onError = (stream: 'stdout' | 'stderr') => (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || state.failed) return;
    state.failed = true;
    // After the command has set its exit code (`--version` is written before its error comes back); a failure code stays.
    if (!process.exitCode) process.exitCode = EXIT_CODES.failure;
    // stderr may still work when stdout failed; when stderr itself failed there is nowhere to say it.
    if (stream === 'stdout') io.stderr.write(`${errorPrefix(io)} cannot write to standard output: ${printable(describeOutputError(error))}\n`);
  };
  process.stdout.on('error', onError('stdout'));
  process.stderr.on('error', onError('stderr'));
  return state;
}

/** Runs the CLI in this process: `process.argv`, the standard streams, and the exit code. */
export async function runCli(): Promise<void> {
  const io: CliIO = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
  const output = watchOutputErrors(io);
  let code: number;
  try {
    code = await main(process.argv.slice(2), io);
  } catch (error) {
    io.stderr.write(`${errorPrefix(io)} ${printable(error instanceof Error ? error.message : String(error))}\n`);
    code = EXIT_CODES.failure;
  }
  // A command that did its work but could not print the result did not succeed; a more specific code stays.
  process.exitCode = output.failed && code === EXIT_CODES.ok ? EXIT_CODES.failure : code;
}
