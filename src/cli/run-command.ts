import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import type { AgentLoopResult } from '../harness/agent-loop.ts';
import { CliUsageError } from './breaker-flags.ts';
import { EXIT_CODES } from './cli-command.ts';
import { MiniAgent } from '../harness/mini-agent.ts';
import { resolveModelSpec } from './model-spec.ts';
import { progressLine, summaryLines, type CliIO } from './progress.ts';
import { watchBreaker } from './watch-breaker.ts';
import { printable } from '../redaction/terminal-text.ts';

/** The longest `--timeout`, in whole seconds: a run's timer cannot run longer than {@link MAX_TIMER_MS}. */
const MAX_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** The exit code of a run ended by a signal: 128 + the signal's number. */
const SIGNAL_EXIT_CODES = { SIGINT: EXIT_CODES.interrupted, SIGTERM: EXIT_CODES.terminated } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

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
error), 2 usage error, 130 interrupted, 143 terminated.`;

function positiveNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new CliUsageError(`--${name} must be a positive number, got "${value}"`);
  return number;
}

/** `--timeout` in milliseconds: checked here, in seconds as typed, so that the error never names the option it becomes. */
function timeoutMs(value: string): number {
  const seconds = Number(value);
  // Number('') and Number(' ') are 0: refused with the rest.
  if (!Number.isFinite(seconds) || seconds * 1000 < 1 || seconds > MAX_TIMEOUT_SECONDS) {
    throw new CliUsageError(`--timeout must be a number of seconds from 0.001 to ${MAX_TIMEOUT_SECONDS} (about 24.8 days), got "${value}"`);
  }
  return seconds * 1000;
}

/** Parses the arguments of `governor run`; throws on an unknown or malformed option. */
function parseRunArgs(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
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
  });
}

/** `governor run`: returns the process exit code (0 completed, 1 any other end, 2 usage error, 130 interrupted, 143 terminated). */
export async function runRunCommand(argv: readonly string[], io: CliIO): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n\n${RUN_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${RUN_USAGE}\n`);
    return 0;
  }
  const task = positionals.join(' ').trim();
  if (!task) {
    io.stderr.write(`governor run: no task given.\n\n${RUN_USAGE}\n`);
    return 2;
  }
  let agent: MiniAgent;
  let label: string;
  // Progress is not the result: it goes to stderr, so stdout holds only the summary or the JSON.
  const print = (line: string): void => {
    io.stderr.write(`${printable(line)}\n`);
  };
  const interrupt = new AbortController();
  try {
    const spec = await resolveModelSpec({ model: values.model, baseURL: values['base-url'], env: io.env });
    label = spec.label;
    const maxInvocations = positiveNumber('max-invocations', values['max-invocations']);
    if (maxInvocations !== undefined && !Number.isInteger(maxInvocations)) throw new CliUsageError('--max-invocations must be a whole number');
    const breaker = values['no-breaker'] ? false : new AgentBreaker();
    const state = breaker ? watchBreaker(breaker, (line) => print(`   ${line}`)) : () => undefined;
    agent = new MiniAgent({
      model: spec.model,
      workingDirectory: resolve(values.dir),
      maxInvocations,
      costLimitUsd: positiveNumber('cost-limit', values['cost-limit']),
      timeoutMs: timeoutMs(values.timeout),
      breaker,
      abortSignal: interrupt.signal,
      sandbox: values.sandbox as 'auto',
      network: values.network,
      onProgress: (event) => {
        const line = progressLine(event, state);
        if (line) print(line);
      },
    });
  } catch (error) {
    io.stderr.write(`governor run: ${printable((error as Error).message)}\n`);
    return 2;
  }
  print(`Running on ${label} in ${resolve(values.dir)}${agent.sandbox === 'bubblewrap' ? ' (commands sandboxed with bubblewrap)' : ''}`);
  if (agent.sandboxWarning !== undefined) print(`Warning: ${agent.sandboxWarning}`);
  // First Ctrl-C or SIGTERM (a supervisor, `timeout`, `docker stop`): abort the run (the shell
  // tool kills the running command's process group) and report; a second signal leaves at once.
  let stoppedBy: StopSignal | undefined;
  const onSignal = (signal: StopSignal): void => {
    if (interrupt.signal.aborted) process.exit(SIGNAL_EXIT_CODES[signal]);
    stoppedBy = signal;
    if (signal === 'SIGINT') {
      io.stderr.write('\nInterrupted: stopping the agent and its running command (Ctrl-C again to quit at once).\n');
      interrupt.abort(new Error('interrupted by the user (Ctrl-C)'));
    } else {
      io.stderr.write('\nTerminated (SIGTERM): stopping the agent and its running command (a second signal quits at once).\n');
      interrupt.abort(new Error('terminated (SIGTERM)'));
    }
  };
  const onInterrupt = (): void => onSignal('SIGINT');
  const onTerminate = (): void => onSignal('SIGTERM');
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  let result: AgentLoopResult;
  try {
    result = await agent.run(task);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
  }
  if (values.json) {
    io.stdout.write(
      `${printable(
        JSON.stringify({
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
        }),
      )}\n`,
    );
  } else {
    io.stdout.write(`\n${printable(summaryLines(result, label).join('\n'))}\n`);
  }
  if (stoppedBy !== undefined) return SIGNAL_EXIT_CODES[stoppedBy];
  return result.status === 'completed' ? EXIT_CODES.ok : EXIT_CODES.failure;
}
