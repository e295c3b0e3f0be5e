import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { hasModelConfiguration, resolveModelSpec } from '../cli/model-spec.ts';
import { formatTokens, progressLine, summaryLines, type CliIO } from '../cli/progress.ts';
import { watchBreaker } from '../cli/watch-breaker.ts';
import type { AgentLoopResult } from '../harness/agent-loop.ts';
import { MiniAgent } from '../harness/mini-agent.ts';
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

async function runOnce(model: unknown, breaker: AgentBreaker | false, print: (line: string) => void): Promise<AgentLoopResult> {
  const dir = freshWorkingDirectory();
  try {
    const state = breaker ? watchBreaker(breaker, (line) => print(`   ${line}`)) : () => undefined;
    const agent = new MiniAgent({
      model,
      workingDirectory: dir,
      maxInvocations: STEP_CAP,
      commandTimeoutMs: 20_000,
      timeoutMs: 300_000,
      breaker,
      onProgress: (event) => {
        const line = progressLine(event, state);
        if (line) print(line);
      },
    });
    return await agent.run(DEMO_TASK);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The main job: MiniAgent fixes a small bug with the breaker on. Without a
 * model key it runs on the scripted stand-in, which loops the way real agents
 * do, and then runs the same agent under a plain step cap to show what that
 * would have spent.
 */
export async function runDemo(io: CliIO): Promise<number> {
  // A real model's words reach the terminal: redacted, and with no control character it could act on.
  const out = (line = ''): void => void io.stdout.write(`${printable(line)}\n`);
  const note = (line = ''): void => void io.stderr.write(`${printable(line)}\n`);
  const real = hasModelConfiguration({ env: io.env });
  let server: ScriptedModelServer | undefined;
  let model: unknown;
  let label: string;
  if (real) {
    const spec = await resolveModelSpec({ env: io.env });
    model = spec.model;
    label = spec.label;
    note(`Running the demo task on the real model ${label}.`);
  } else {
    server = await new ScriptedModelServer({ script: scriptedDemoAgent, onExhausted: 'error' }).start();
    model = scriptedModel(server);
    label = 'scripted stand-in (local, no key)';
    note('No model key found: running on the SCRIPTED STAND-IN model, a local fake that replays a realistic agent over HTTP.');
    note('Set OPENAI_API_KEY (or GOVERNOR_BASE_URL and GOVERNOR_MODEL) to run a real model on the same task.');
  }
  try {
    note();
    note(`Task: ${DEMO_TASK}`);
    note();
    const governed = await runOnce(model, new AgentBreaker(), note);
    out();
    out('--- Summary: with the AgentBreaker ---');
    for (const line of summaryLines(governed, label)) out(line);
    if (server) {
      out();
      out(`--- The same agent under a plain step cap of ${STEP_CAP} model calls, no breaker ---`);
      const capped = await runOnce(model, false, () => undefined);
      for (const line of summaryLines(capped, label)) out(line);
      out();
      out(
        `With the breaker the agent ended with "${governed.status}" after ${governed.invocations} model calls (${formatTokens(governed.usage)}); ` +
          `under the plain step cap it kept looping for ${capped.invocations} calls (${formatTokens(capped.usage)}) and ended with "${capped.status}".`,
      );
    }
    return governed.status === 'completed' ? 0 : 1;
  } finally {
    await server?.close();
  }
}
