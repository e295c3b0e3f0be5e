import assert from 'node:assert/strict';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, AgentBreakerError, ChatClient, ToolCallAdvisor } from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { AgentLoop, type AgentLoopEvent } from './agent-loop.ts';

const submit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true });
const work = tool({ inputSchema: z.object({ step: z.number() }), execute: async ({ step }) => `did ${step}` });

function client(turns: MockTurn[], extra: ConstructorParameters<typeof ToolCallAdvisor>[0] = {}) {
  const model = mockModel(turns);
  return { model, client: ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(extra)).defaultTools({ submit, work }).build() };
}

const PRICES = { 'mock-model-id': { inputPerMillion: 1_000_000, outputPerMillion: 1_000_000, cachedInputPerMillion: 1_000_000 } };

describe('AgentLoop', () => {
  test('completed: the finish tool ends the run; usage is the sum of every round', async () => {
    const { client: c } = client([
      { toolCalls: [{ name: 'work', input: { step: 1 } }], inputTokens: 10, outputTokens: 2 },
      { toolCalls: [{ name: 'work', input: { step: 2 } }], inputTokens: 20, outputTokens: 3 },
      { toolCalls: [{ name: 'submit', input: { summary: 'all done' } }], inputTokens: 30, outputTokens: 4 },
    ]);
    const result = await new AgentLoop({ client: c, maxInvocations: 10 }).run('do it');
    assert.equal(result.status, 'completed');
    assert.equal(result.output, 'all done');
    assert.equal(result.invocations, 3);
    assert.equal(result.turns, 1);
    assert.equal(result.toolCalls, 3);
    assert.deepEqual(result.usage, { inputTokens: 60, outputTokens: 9, cachedInputTokens: 0 });
    assert.equal(result.costUsd, 'unknown'); // the mock model has no price
  });

  test('a continuation turn says what is left and does not re-send the task', async () => {
    const { model, client: c } = client([{ text: 'I think I am done' }, { toolCalls: [{ name: 'submit', input: { summary: 'ok' } }] }]);
    const result = await new AgentLoop({ client: c, maxInvocations: 5 }).run('the original task');
    assert.equal(result.status, 'completed');
    assert.equal(result.turns, 2);
    const second = model.doGenerateCalls[1]!.prompt;
    const userTexts = second.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
    assert.equal(userTexts.filter((t) => t.includes('the original task')).length, 1);
    assert.match(userTexts.at(-1)!, /not called `submit`.*4 of 5 model calls remain/);
  });

  test('invocation_limit: the limit is checked before each model call, inside the tool loop', async () => {
    const { model, client: c } = client(Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: 'work', input: { step: i } }] })));
    const result = await new AgentLoop({ client: c, maxInvocations: 3 }).run('loop');
    assert.equal(result.status, 'invocation_limit');
    assert.equal(result.invocations, 3);
    assert.equal(model.doGenerateCalls.length, 3);
  });

  test('cost_limit: a call that would overshoot is not started', async () => {
    // Each call: 10 in + 5 out tokens at $1 per token = $15. Before each, the projected prompt (the request's
    // size, growing each round) and a minimal answer of 64 tokens must fit in what is left: some calls, not ten.
    const { model, client: c } = client(Array.from({ length: 10 }, (_, i) => ({ toolCalls: [{ name: 'work', input: { step: i } }] })));
    const result = await new AgentLoop({ client: c, maxInvocations: 10, costLimitUsd: 200, prices: PRICES }).run('x');
    assert.equal(result.status, 'cost_limit');
    assert.ok(result.invocations >= 1 && result.invocations < 10, `${result.invocations} calls`);
    assert.ok(typeof result.costUsd === 'number' && result.costUsd <= 200, `spent ${String(result.costUsd)}`);
    assert.equal(model.doGenerateCalls.length, result.invocations);
    assert.match(result.reason ?? '', /cost limit of \$200/);
  });

  test('a cost limit on a model without a price is refused when the loop is built, never an unlimited run', async () => {
    const { model, client: c } = client([{ text: 'never' }]);
    assert.throws(
      () => new AgentLoop({ client: c, costLimitUsd: 1 }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'costLimitUsd' && /price for model "mock-model-id"/.test(e.message),
    );
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test('timeout: a hanging tool is cut off at the time limit', async () => {
    const hang = tool({
      inputSchema: z.object({}),
      execute: (_i, { abortSignal }) => new Promise((_, reject) => abortSignal?.addEventListener('abort', () => reject(abortSignal.reason))),
    });
    const model = mockModel([{ toolCalls: [{ name: 'hang', input: {} }] }]);
    const c = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ hang }).build();
    const result = await new AgentLoop({ client: c, timeoutMs: 50 }).run('x');
    assert.equal(result.status, 'timeout');
  });

  test("aborted: the caller's signal ends the run", async () => {
    const controller = new AbortController();
    const stopper = tool({
      inputSchema: z.object({}),
      execute: async () => {
        controller.abort(new Error('operator stop'));
        return 'ok';
      },
    });
    const model = mockModel([{ toolCalls: [{ name: 'stopper', input: {} }] }, { text: 'never' }]);
    const c = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ stopper }).build();
    const result = await new AgentLoop({ client: c, abortSignal: controller.signal }).run('x');
    assert.equal(result.status, 'aborted');
    assert.equal(model.doGenerateCalls.length, 1);
  });

  test('stuck: a breaker stop ends the run with status stuck and the typed error', async () => {
    let executions = 0;
    const status = tool({
      inputSchema: z.object({ job: z.string() }),
      execute: async () => {
        executions += 1;
        return 'job 7: FAILED (exit 1)';
      },
    });
    const model = mockModel(Array.from({ length: 30 }, () => ({ toolCalls: [{ name: 'status', input: { job: '7' } }] })));
    const c = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker()).defaultTools({ status }).build();
    const result = await new AgentLoop({ client: c, maxInvocations: 30 }).run('x');
    assert.equal(result.status, 'stuck');
    assert.ok(result.error instanceof AgentBreakerError);
    assert.ok(result.invocations < 30, `stopped after ${result.invocations} model calls`);
    assert.ok(executions < result.invocations, 'the repeated call was blocked at least once instead of running');
  });

  test('stuck: the round the breaker stops after was made, so it is counted and reported before the stop', async () => {
    const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'job 7: FAILED (exit 1)' });
    const model = mockModel(Array.from({ length: 30 }, () => ({ toolCalls: [{ name: 'status', input: { job: '7' } }], inputTokens: 100, outputTokens: 5 })));
    const breaker = new AgentBreaker();
    const log: string[] = [];
    breaker.on((e) => {
      if (e.type === 'escalation') log.push(`breaker ${e.action}`);
    });
    const c = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(), breaker).defaultTools({ status }).build();
    const result = await new AgentLoop({
      client: c,
      maxInvocations: 30,
      onProgress: (e) => {
        if (e.type === 'invocation-start' || e.type === 'invocation-end') log.push(`${e.type} ${e.invocation}`);
      },
    }).run('x');
    assert.equal(result.status, 'stuck');
    const calls = model.doGenerateCalls.length;
    assert.equal(result.invocations, calls);
    assert.deepEqual(result.usage, { inputTokens: 100 * calls, outputTokens: 5 * calls, cachedInputTokens: 0 });
    // Every call that started ended, and each escalation follows the end of the call it judged.
    assert.equal(log.filter((l) => l.startsWith('invocation-end')).length, calls);
    assert.equal(log.at(-2), `invocation-end ${calls}`);
    assert.equal(log.at(-1), 'breaker stop');
    for (const [i, line] of log.entries()) if (line.startsWith('breaker')) assert.match(log[i - 1]!, /^(invocation-end|breaker)/, log.join(' | '));
  });

  test('the breaker refusing a call at its gate counts no invocation: no model call was made', async () => {
    const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'job 7: FAILED (exit 1)' });
    const model = mockModel(Array.from({ length: 30 }, () => ({ toolCalls: [{ name: 'status', input: { job: '7' } }] })));
    const c = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker()).defaultTools({ status }).build();
    const loop = new AgentLoop({ client: c, maxInvocations: 30, conversationId: 'c-open' });
    const first = await loop.run('x');
    assert.equal(first.status, 'stuck');
    const callsBefore = model.doGenerateCalls.length;
    const again = await loop.run('try again');
    assert.equal(again.status, 'stuck');
    assert.equal(again.error instanceof AgentBreakerError && again.error.code, 'GOVERNOR_BREAKER_OPEN');
    assert.equal(model.doGenerateCalls.length, callsBefore);
    assert.equal(again.invocations, 0);
  });

  test('error: a model failure ends the run with status error and the reason', async () => {
    const { client: c } = client([]);
    const result = await new AgentLoop({ client: c }).run('x');
    assert.equal(result.status, 'error');
    assert.match(result.reason ?? '', /exhausted/);
  });

  test('progress events report each invocation and tool call, and the end', async () => {
    const events: AgentLoopEvent['type'][] = [];
    const { client: c } = client([{ toolCalls: [{ name: 'work', input: { step: 1 } }] }, { toolCalls: [{ name: 'submit', input: { summary: 's' } }] }]);
    await new AgentLoop({ client: c, onProgress: (e) => events.push(e.type) }).run('x');
    assert.deepEqual(events, ['invocation-start', 'invocation-end', 'tool-call-end', 'invocation-start', 'invocation-end', 'tool-call-end', 'end']);
  });
});
