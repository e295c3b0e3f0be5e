import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { EXIT_CODES } from '../cli/cli-command.ts';
import { writeCommandError } from '../cli/command-error.ts';
import { hasModelConfiguration, resolveModelSpec, type ResolvedModelSpec } from '../cli/model-spec.ts';
import { formatTokens, progressLine, summaryLines, type CliIO } from '../cli/progress.ts';
import { stopOnSignals } from '../cli/stop-on-signals.ts';
import { watchBreaker } from '../cli/watch-breaker.ts';
import { GovernorError } from '../errors/governor-error.ts';
import type { AgentLoopResult } from '../harness/agent-loop.ts';
import { MiniAgent } from '../harness/mini-agent.ts';
import type { SupportedLanguageModel } from '../model/resolve-model.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { DEMO_FILES, DEMO_TASK } from './demo-task.ts';
import { scriptedDemoAgent } from './scripted-agent.ts';
import { printable } from '../redaction/terminal-text.ts';

/** The step cap a plain agent loop would use, for the comparison. */
const STEP_CAP = 20;

function freshWorkingDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'governor-demo-'));
  for (const [name, content] of Object.entries(DEMO_FILES)) writeFileSync(join(dir, name), content);
  return dir;
}

/** The working directories of the runs under way, removed at once when a second signal quits without unwinding. */
const liveDirectories = new Set<string>();

function removeLiveDirectories(): void {
  for (const dir of liveDirectories) rmSync(dir, { recursive: true, force: true });
}

async function runOnce(
  model: SupportedLanguageModel,
  breaker: AgentBreaker | false,
  print: (line: string) => void,
  abortSignal: AbortSignal,
): Promise<AgentLoopResult> {
  const dir = freshWorkingDirectory();
  liveDirectories.add(dir);
  try {
    const state = breaker ? watchBreaker(breaker, (line) => print(`   ${line}`)) : () => undefined;
    const agent = new MiniAgent({
      model,
      workingDirectory: dir,
      maxInvocations: STEP_CAP,
      commandTimeoutMs: 20_000,
      timeoutMs: 300_000,
      breaker,
      abortSignal,
      onProgress: (event) => {
        const line = progressLine(event, state);
        if (line) print(line);
      },
    });
    return await agent.run(DEMO_TASK);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    liveDirectories.delete(dir);
  }
}

/** A model configuration the environment holds but that cannot be used (as opposed to a package that is missing). */
const MODEL_SPEC_ERROR = 'GOVERNOR_MODEL_SPEC';

/**
 * The advice of a model configuration error, for the demo: it reads its model
 * from the environment only and refuses flags, so the flags the advice names
 * for `governor run` become the variables that mean the same.
 */
function withVariablesForFlags(message: string): string {
  return message
    .replace(/\(--base-url or GOVERNOR_BASE_URL\)/g, '(GOVERNOR_BASE_URL)')
    .replace(/--base-url \(or GOVERNOR_BASE_URL\)/g, 'GOVERNOR_BASE_URL')
    .replace(/--model (\S+) \(or GOVERNOR_MODEL\)/g, 'GOVERNOR_MODEL=$1')
    .replace(/--base-url/g, 'GOVERNOR_BASE_URL')
    .replace(/--model (\S+)/g, 'GOVERNOR_MODEL=$1');
}

/** The model named by the environment; `undefined` after saying why it cannot be used. */
async function realModel(io: CliIO): Promise<ResolvedModelSpec | undefined> {
  try {
    return await resolveModelSpec({ env: io.env });
  } catch (error) {
    // A missing provider package keeps its own message; the demo command says it as a usage error (exit 2).
    if (!(GovernorError.isInstance(error) && error.code === MODEL_SPEC_ERROR)) throw error;
    writeCommandError(
      io,
      'demo',
      `${withVariablesForFlags(error.message)}\nThe demo takes its model from GOVERNOR_MODEL, GOVERNOR_BASE_URL, OPENAI_API_KEY and ANTHROPIC_API_KEY; unset them to run on the scripted stand-in.`,
    );
    return undefined;
  }
}

/**
 * The main job: MiniAgent fixes a small bug with the breaker on. Without a
 * model key it runs on the scripted stand-in, which loops the way real agents
 * do, and then runs the same agent under a plain step cap to show what that
 * would have spent. Ctrl-C or SIGTERM stops it as it stops `governor run`:
 * the summary so far, exit 130 or 143, and no working directory left behind.
 */
export async function runDemo(io: CliIO): Promise<number> {
  // A real model's words reach the terminal: redacted, and with no control character it could act on.
  const out = (line = ''): void => void io.stdout.write(`${printable(line)}\n`);
  const note = (line = ''): void => void io.stderr.write(`${printable(line)}\n`);
  const real = hasModelConfiguration({ env: io.env });
  let server: ScriptedModelServer | undefined;
  let model: SupportedLanguageModel;
  let label: string;
  if (real) {
    const spec = await realModel(io);
    if (spec === undefined) return EXIT_CODES.usage;
    model = spec.model;
    label = spec.label;
    note(`Running the demo task on the real model ${label}.`);
  } else {
    server = await new ScriptedModelServer({ script: scriptedDemoAgent, onExhausted: 'error' }).start();
    model = scriptedModel(server);
    label = 'scripted stand-in (local, no key)';
    note('No model key found: running on the SCRIPTED STAND-IN model, a local fake that replays a realistic agent over HTTP.');
    note('Set OPENAI_API_KEY or ANTHROPIC_API_KEY (or GOVERNOR_BASE_URL and GOVERNOR_MODEL) to run a real model on the same task.');
  }
  const interrupt = new AbortController();
  // Without it the default action kills the process mid-run, and the finally blocks that remove the directories never run.
  const signals = stopOnSignals(interrupt, io, removeLiveDirectories);
  try {
    note();
    note(`Task: ${DEMO_TASK}`);
    note();
    const governed = await runOnce(model, new AgentBreaker(), note, interrupt.signal);
    out();
    out('--- Summary: with the AgentBreaker ---');
    for (const line of summaryLines(governed, label)) out(line);
    if (signals.exitCode !== undefined) return signals.exitCode;
    if (server) {
      out();
      out(`--- The same agent under a plain step cap of ${STEP_CAP} model calls, no breaker ---`);
      const capped = await runOnce(model, false, () => undefined, interrupt.signal);
      for (const line of summaryLines(capped, label)) out(line);
      if (signals.exitCode !== undefined) return signals.exitCode;
      out();
      out(
        `With the breaker the agent ended with "${governed.status}" after ${governed.invocations} model calls (${formatTokens(governed.usage)}); ` +
          `under the plain step cap it kept looping for ${capped.invocations} calls (${formatTokens(capped.usage)}) and ended with "${capped.status}".`,
      );
    }
    return governed.status === 'completed' ? EXIT_CODES.ok : EXIT_CODES.failure;
  } finally {
    signals.runEnded();
    await server?.close();
  }
}
