/**
 * Every run returns: faults end an AgentLoop (and MiniAgent) run with a
 * status, its usage and the transcript so far, over real HTTP against the
 * scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { z } from 'zod';
import { AgentBreaker, AgentLoop, ChatClient, InvalidOptionError, MiniAgent, ToolCallAdvisor, type AgentLoopEvent } from '../index.ts';
import { ScriptedModelServer, scriptedModel, type ScriptedTurn } from '../testing/index.ts';

/** A tool that never settles and ignores its abort signal: the worst case. */
const hang = tool({ description: 'hangs', inputSchema: z.object({}), execute: () => new Promise<string>(() => {}) });
const work = tool({ description: 'works', inputSchema: z.object({ step: z.number() }), execute: async ({ step }) => `did ${step}` });

async function start(script: ScriptedTurn[]): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script }).start();
}

function toolResults(messages: readonly ModelMessage[]): Array<{ toolName: string; output: unknown }> {
  return messages.flatMap((m) =>
    m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [{ toolName: p.toolName, output: p.output }] : [])) : [],
  );
}

describe('AgentLoop: every run returns', () => {
  test('a tool that never resolves: the run ends at timeoutMs with status timeout, usage and the transcript so far', async () => {
    await using server = await start([
      { toolCalls: [{ name: 'work', arguments: { step: 1 } }], usage: { promptTokens: 10, completionTokens: 2 } },
      { toolCalls: [{ name: 'hang', arguments: {} }], usage: { promptTokens: 20, completionTokens: 3 } },
    ]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ work, hang }).build();
    const started = performance.now();
    const result = await new AgentLoop({ client, timeoutMs: 800 }).run('do the work');
    const elapsed = performance.now() - started;

    assert.equal(result.status, 'timeout');
    assert.ok(elapsed < 800 + 1_000, `returned ${Math.round(elapsed)} ms after start`);
    assert.match(result.reason ?? '', /time limit of 800 ms/);
    assert.deepEqual(result.usage, { inputTokens: 30, outputTokens: 5, cachedInputTokens: 0 });
    assert.equal(result.invocations, 2);
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant', 'tool'],
    );
    const results = toolResults(result.messages);
    assert.deepEqual(results[0], { toolName: 'work', output: { type: 'text', value: 'did 1' } });
    assert.equal(results[1]!.toolName, 'hang');
    assert.match(JSON.stringify(results[1]!.output), /error-text.*hang.*time limit of 800 ms/);
  });

  test('a time limit of a second or more is said in seconds', async () => {
    await using server = await start([{ toolCalls: [{ name: 'hang', arguments: {} }] }]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ hang }).build();
    const result = await new AgentLoop({ client, timeoutMs: 1_200 }).run('do the work');
    assert.equal(result.status, 'timeout');
    assert.match(result.reason ?? '', /the run exceeded its time limit of 1\.2 s$/);
  });

  test('provider errors after retries end the run with status error and keep every finished round', async () => {
    await using server = await start([
      { toolCalls: [{ name: 'work', arguments: { step: 1 } }] },
      { error: { status: 503, retryAfterMs: 1 } },
      { error: { status: 503, retryAfterMs: 1 } },
      { error: { status: 503, retryAfterMs: 1 } },
    ]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ work }).build();
    const events: AgentLoopEvent[] = [];
    const result = await new AgentLoop({ client, onProgress: (e) => events.push(e) }).run('do the work');

    assert.equal(result.status, 'error');
    assert.match(result.reason ?? '', /Failed after 3 attempts/);
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.deepEqual(toolResults(result.messages), [{ toolName: 'work', output: { type: 'text', value: 'did 1' } }]);
    const retries = events.filter((e) => e.type === 'retry');
    assert.deepEqual(
      retries.map((e) => [e.invocation, e.attempt, e.statusCode]),
      [
        [2, 1, 503],
        [2, 2, 503],
      ],
    );
    assert.equal(events.at(-1)?.type, 'end');
  });

  test('the caller aborting ends the run at once even while a tool ignores its signal; nothing is reported after the end', async () => {
    const late = tool({
      description: 'slow, deaf to aborts',
      inputSchema: z.object({}),
      execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 500)),
    });
    await using server = await start([{ toolCalls: [{ name: 'late', arguments: {} }] }]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ late }).build();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('operator stop')), 100);
    const events: AgentLoopEvent['type'][] = [];
    const result = await new AgentLoop({ client, abortSignal: controller.signal, onProgress: (e) => events.push(e.type) }).run('x');
    assert.equal(result.status, 'aborted');
    assert.ok(result.durationMs < 450, `returned after ${Math.round(result.durationMs)} ms, before the tool finished`);
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(events.at(-1), 'end', 'the tool finishing later does not report into the ended run');
  });

  test('timeoutMs past the timer maximum is refused instead of overflowing', () => {
    const client = ChatClient.create(scriptedModelStub());
    for (const timeoutMs of [2 ** 31, Infinity, Number.NaN, -1]) {
      assert.throws(
        () => new AgentLoop({ client, timeoutMs }),
        (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'timeoutMs',
      );
    }
    assert.equal(new AgentLoop({ client, timeoutMs: 2 ** 31 - 1 }).timeoutMs, 2 ** 31 - 1);
  });

  test('a listener with a misspelt or non-function hook is refused, as the ToolCallAdvisor refuses it', () => {
    const client = ChatClient.create(scriptedModelStub());
    const bad: Array<[unknown[], string, RegExp]> = [
      [[{ onToolEnd: () => {} }], 'listeners[0]', /at least one of onToolCallStart, onToolCallEnd, onToolCallError.*onToolEnd/],
      [[{ onToolCallEnd: () => {} }, { onToolCallError: 'log' }], 'listeners[1].onToolCallError', /must be a function/],
    ];
    for (const [listeners, option, message] of bad) {
      assert.throws(
        () => new AgentLoop({ client, listeners: listeners as never }),
        (e: unknown) => InvalidOptionError.isInstance(e) && e.option === option && message.test(e.message),
      );
    }
    assert.ok(new AgentLoop({ client, listeners: [{ onToolCallEnd: () => {} }] }));
  });
});

describe('tool time limits', () => {
  test('a plain call(): a hanging tool times out and the model reads the timeout as an error result', async () => {
    await using server = await start([{ toolCalls: [{ name: 'hang', arguments: {} }] }, { text: 'the tool timed out' }]);
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallAdvisor({ toolTimeoutMs: 60_000, toolTimeouts: { hang: 150 } }))
      .defaultTools({ hang })
      .build();
    assert.equal(await client.prompt('x').call().content(), 'the tool timed out');
    const sent = JSON.stringify(server.requests[1]!.body.messages);
    assert.match(sent, /timed out after 150 ms/);
  });

  test('a plain call(): the abort signal is raced, not awaited', async () => {
    await using server = await start([{ toolCalls: [{ name: 'hang', arguments: {} }] }]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ hang }).build();
    await assert.rejects(
      client.prompt('x').abortSignal(AbortSignal.timeout(150)).call().content(),
      (e: unknown) => e instanceof Error && e.name === 'TimeoutError',
    );
  });

  test('tool time limits are validated', () => {
    for (const options of [{ toolTimeoutMs: 0 }, { toolTimeoutMs: 2 ** 31 }, { toolTimeouts: { shell: -1 } }, { toolTimeouts: 5 }]) {
      assert.throws(
        () => new ToolCallAdvisor(options as never),
        (e: unknown) => InvalidOptionError.isInstance(e) && /toolTimeout/.test(e.option),
      );
    }
  });
});

describe('MiniAgent: every run returns', () => {
  test('an unrecoverable error after 3 commands returns those commands and their outputs', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'governor-faults-'));
    try {
      const command = (n: number) => ({ toolCalls: [{ name: 'shell', arguments: { command: `echo made ${n} > file${n}.txt && echo wrote ${n}` } }] });
      await using server = await start([command(1), command(2), command(3), { error: { status: 400, message: 'context length exceeded' } }]);
      const result = await new MiniAgent({ model: scriptedModel(server), workingDirectory: dir, breaker: false }).run('write three files');

      assert.equal(result.status, 'error');
      assert.match(result.reason ?? '', /context length exceeded/);
      assert.equal(result.toolCalls, 3);
      const commands = result.messages.flatMap((m) =>
        m.role === 'assistant' && Array.isArray(m.content)
          ? m.content.flatMap((p) => (p.type === 'tool-call' ? [(p.input as { command: string }).command] : []))
          : [],
      );
      assert.deepEqual(
        commands,
        [1, 2, 3].map((n) => `echo made ${n} > file${n}.txt && echo wrote ${n}`),
      );
      const outputs = toolResults(result.messages).map((r) => JSON.stringify(r.output));
      assert.equal(outputs.length, 3);
      for (const [i, o] of outputs.entries()) assert.match(o, new RegExp(`wrote ${i + 1}`));
      assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.txt')).sort(), ['file1.txt', 'file2.txt', 'file3.txt']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function scriptedModelStub(): LanguageModelV4 {
  // Construction-time checks never call the model; any V4-shaped model will do.
  return {
    specificationVersion: 'v4',
    provider: 'stub',
    modelId: 'stub',
    supportedUrls: {},
    doGenerate: async () => {
      throw new Error('not called');
    },
    doStream: async () => {
      throw new Error('not called');
    },
  };
}

describe('argument nesting depth', () => {
  test('tool arguments nested 10,000 levels deep become an error result, not a stack overflow', async () => {
    const deep = `{"step":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    await using server = await start([{ toolCalls: [{ name: 'work', arguments: deep }] }, { text: 'understood' }]);
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor(), new AgentBreaker()).defaultTools({ work }).build();
    assert.equal(await client.prompt('x').call().content(), 'understood');
    assert.match(JSON.stringify(server.requests[1]!.body.messages), /nest deeper than 256 levels/);
  });
});
