import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import type { AgentLoopResult } from '../harness/agent-loop.ts';
import { EXIT_CODES } from './cli-command.ts';
import { parseCommandArgs } from './command-args.ts';
import { CliUsageError, writeCommandError } from './command-error.ts';
import { MiniAgent } from '../harness/mini-agent.ts';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { findPrice } from '../model/pricing.ts';
import { resolveModelSpec } from './model-spec.ts';
import { stopOnSignals } from './stop-on-signals.ts';
import { progressLine, summaryLines, type CliIO } from './progress.ts';
import { watchBreaker } from './watch-breaker.ts';
import { printable, terminalText } from '../redaction/terminal-text.ts';
import { redactValue } from '../redaction/redact.ts';
import { resolveSandbox, SandboxUnavailableError, type SandboxMode } from '../harness/sandbox.ts';
import { assertBubblewrapOutside } from '../harness/sandboxed-launch.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';

/** The longest `--timeout`, in whole seconds: a run's timer cannot run longer than {@link MAX_TIMER_MS}. */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** The exit code of a run ended by a signal: 128 + the signal's number. */

/** The help of `governor run`. */
export const RUN_USAGE = `Usage: governor run "TASK" [--dir DIR] [--model provider:model] [--base-url URL]
                    [--max-invocations N] [--cost-limit USD] [--timeout SECONDS] [--no-breaker] [--json]
                    [--sandbox auto|bubblewrap|none] [--network]

Runs MiniAgent (a shell and a submit tool, with the AgentBreaker) on TASK in DIR.
Model: --model openai:gpt-4o (OPENAI_API_KEY), anthropic:claude-sonnet-4-5 (ANTHROPIC_API_KEY),
or --base-url http://127.0.0.1:11434/v1 --model llama3.1 for an OpenAI-compatible server.
The same settings are read from GOVERNOR_MODEL and GOVERNOR_BASE_URL.
Commands run in a bubblewrap sandbox (no network unless --network) where bwrap works;
--sandbox none runs them unsandboxed.

--timeout limits the whole run: 0.001 to ${MAX_TIMEOUT_SECONDS} seconds (about 24.8 days), default 600.

Progress goes to stderr; the summary (or with --json one JSON object) to stdout.
Ctrl-C (SIGINT) or SIGTERM stops the agent and the command it is running (its
whole process group), prints the summary so far and exits 130 (SIGINT) or 143
(SIGTERM); a second signal quits at once.
Exit codes: 0 completed, 1 the run ended otherwise (a limit, the breaker, an
error), 2 usage error (also a provider package that is not installed), 130
interrupted, 143 terminated.`;

/**
 * A number as written in decimals (`0.5`, `2`, `.25`): Number() would also read `0x10`, `1e3` and ` 5 `, typos
 * more likely than meant, as for --max-invocations.
 */
function decimal(value: string): number {
  return /^(\d+(\.\d*)?|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
}

function positiveNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = decimal(value);
  if (!Number.isFinite(number) || number <= 0) throw new CliUsageError(`--${name} must be a positive number written in decimals (e.g. 0.5), got "${value}"`);
  return number;
}

/** `--timeout` in milliseconds: checked here, in seconds as typed, so that the error never names the option it becomes. */
function timeoutMs(value: string): number {
  const seconds = decimal(value);
  if (!Number.isFinite(seconds) || seconds * 1000 < 1 || seconds > MAX_TIMEOUT_SECONDS) {
    throw new CliUsageError(`--timeout must be a number of seconds from 0.001 to ${MAX_TIMEOUT_SECONDS} (about 24.8 days), got "${value}"`);
  }
  return seconds * 1000;
}

/** Parses the arguments of `governor run`; throws on an unknown or malformed option. */
function parseRunArgs(argv: readonly string[]) {
  return parseCommandArgs(
    argv,
    {
      dir: { type: 'string', default: '.' },
      sandbox: { type: 'string', default: 'auto' },
      network: { type: 'boolean', default: false },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      'max-invocations': { type: 'string', default: '20' },
      'cost-limit': { type: 'string' },
      timeout: { type: 'string', default: '600' },
      'no-breaker': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    true,
  );
}

/** `--dir`, checked here so that the error names the flag, not the option of MiniAgent it becomes. */
function workingDirectory(dir: string): string {
  const path = resolve(dir);
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // Missing or unreadable: said below, the same way.
  }
  // The flag and the value first: the error is redacted, and a `name: value` shape (`./secrets: does …`) would be taken for a secret.
  if (!isDirectory) throw new CliUsageError(`--dir: ${dir} does not exist or is not a directory`);
  return path;
}

/**
 * `--dir` under the bubblewrap sandbox, checked here so that the error names
 * the flag, not the option of MiniAgent it becomes: commands may write in it,
 * so it must not hold the bwrap executable.
 */
function bubblewrapOutside(dir: string, path: string): void {
  try {
    // The real path, as the shell tool checks it: a link to /usr is /usr.
    assertBubblewrapOutside([realpathSync(path)], '--dir');
  } catch (error) {
    if (InvalidOptionError.isInstance(error) && error.option === '--dir') {
      throw new CliUsageError(`--dir: ${dir} ${error.message.replace(/^Invalid option "--dir": /, '')}`);
    }
    throw error;
  }
}

/** `--max-invocations`, checked here so that the error names the flag, not the option of MiniAgent it becomes. */
function maxInvocations(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // Digits only, as written: Number() would also read '0x3', '1e0' and ' 2 ', typos more likely than meant. Past 2^53 a number is no longer a count.
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw new CliUsageError(`--max-invocations must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, got "${value}"`);
  }
  return number;
}

const SANDBOX_MODES: readonly string[] = ['auto', 'bubblewrap', 'none'] satisfies readonly SandboxMode[];

/**
 * `--sandbox`, resolved here: the header says which sandbox commands run in,
 * and the shell tool, handed the resolved kind, has no fallback of its own to
 * warn about again (on stderr, through Node's warning channel).
 * @throws CliUsageError for `bubblewrap` where bwrap cannot run, with the API's advice in the flag's words
 */
function sandbox(value: string): ReturnType<typeof resolveSandbox> {
  if (!SANDBOX_MODES.includes(value)) throw new CliUsageError(`--sandbox must be auto, bubblewrap or none, got "${value}"`);
  try {
    return resolveSandbox(value as SandboxMode);
  } catch (error) {
    // Its advice names the option of the API; here the flag is what to pass.
    if (SandboxUnavailableError.isInstance(error)) throw new CliUsageError(error.message.replace(/\bsandbox: 'none'/, '--sandbox none'));
    throw error;
  }
}

/**
 * `--cost-limit`, refused now for a model without a price: the run would
 * otherwise start, then end at once with an error. Priced as AgentLoop prices
 * the run (the model's own id, the built-in price table: the CLI passes no
 * prices of its own).
 */
function costLimit(value: string | undefined, model: LanguageModelV4): number | undefined {
  const usd = positiveNumber('cost-limit', value);
  if (usd !== undefined && findPrice(model.modelId) === undefined) {
    throw new CliUsageError(
      `--cost-limit needs a price for model "${model.modelId}", and there is none (a model behind a base URL has one only if its id is a known one, such as gpt-4o-mini): leave out --cost-limit and bound the run with --max-invocations or --timeout`,
    );
  }
  return usd;
}

/** `governor run`: returns the process exit code (0 completed, 1 any other end, 2 usage error, 130 interrupted, 143 terminated). */
export async function runRunCommand(argv: readonly string[], io: CliIO): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (error) {
    // parseArgs quotes the option as typed, which may be a pasted secret.
    writeCommandError(io, 'run', error, RUN_USAGE);
    return EXIT_CODES.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${RUN_USAGE}\n`);
    return EXIT_CODES.ok;
  }
  const task = positionals.join(' ').trim();
  if (!task) {
    io.stderr.write(`governor run: no task given.\n\n${RUN_USAGE}\n`);
    return EXIT_CODES.usage;
  }
  let agent: MiniAgent;
  let label: string;
  let dir: string;
  let resolved: ReturnType<typeof resolveSandbox>;
  // Progress is not the result: it goes to stderr, so stdout holds only the summary or the JSON.
  const print = (line: string): void => {
    io.stderr.write(`${printable(line)}\n`);
  };
  const interrupt = new AbortController();
  try {
    const spec = await resolveModelSpec({ model: values.model, baseURL: values['base-url'], env: io.env });
    label = spec.label;
    dir = workingDirectory(values.dir);
    const invocations = maxInvocations(values['max-invocations']);
    const costLimitUsd = costLimit(values['cost-limit'], spec.model);
    resolved = sandbox(values.sandbox);
    if (resolved.kind === 'bubblewrap') bubblewrapOutside(values.dir, dir);
    const breaker = values['no-breaker'] ? false : new AgentBreaker();
    const state = breaker ? watchBreaker(breaker, (line) => print(`   ${line}`)) : () => undefined;
    agent = new MiniAgent({
      model: spec.model,
      workingDirectory: dir,
      maxInvocations: invocations,
      costLimitUsd,
      timeoutMs: timeoutMs(values.timeout),
      breaker,
      abortSignal: interrupt.signal,
      sandbox: resolved.kind,
      network: values.network,
      onProgress: (event) => {
        const line = progressLine(event, state);
        if (line) print(line);
      },
    });
  } catch (error) {
    writeCommandError(io, 'run', error);
    // Whatever stops the run before it starts is for the user to fix first (a flag, a key, a package to install).
    return EXIT_CODES.usage;
  }
  print(`Running on ${label} in ${dir}${agent.sandbox === 'bubblewrap' ? ' (commands sandboxed with bubblewrap)' : ''}`);
  if (resolved.warning !== undefined) print(`Warning: ${resolved.warning}`);
  const signals = stopOnSignals(interrupt, io);
  let result: AgentLoopResult;
  try {
    result = await agent.run(task);
  } finally {
    signals.runEnded();
  }
  if (values.json) {
    const json = {
      status: result.status,
      reason: result.reason,
      invocations: result.invocations,
      turns: result.turns,
      toolCalls: result.toolCalls,
      usage: result.usage,
      costUsd: result.costUsd,
      output: result.output,
      durationMs: Math.round(result.durationMs),
      conversationId: result.conversationId,
    };
    // Redacted value by value, then serialised: rules for text, run over JSON text, miss escaped secrets and can break
    // the JSON. Control characters JSON.stringify leaves raw (DEL, C1) are escaped, as JSON allows.
    io.stdout.write(`${terminalText(JSON.stringify(redactValue(json)))}\n`);
  } else {
    io.stdout.write(`\n${printable(summaryLines(result, label).join('\n'))}\n`);
  }
  if (signals.exitCode !== undefined) return signals.exitCode;
  return result.status === 'completed' ? EXIT_CODES.ok : EXIT_CODES.failure;
}
