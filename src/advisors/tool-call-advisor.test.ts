import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  ChatClient,
  CONVERSATION_ID,
  InvalidOptionError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolCallAdvisor,
  ToolCallingAdvisor,
  ToolCallLimitExceededError,
  toolApprovalResponse,
  type ChatClientRequestSpec,
  type ChatResponse,
  type GovernorToolContext,
  type ToolCallListener,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { LOOP_ENDING_TOOLS } from './loop-ending.ts';

function lastToolResults(messages: readonly ModelMessage[]) {
  const last = messages.at(-1);
  assert.ok(last && last.role === 'tool', 'the last message sent to the model is a tool message');
  return last.content.map((p) => (p.type === 'tool-result' ? p.output : undefined));
}

const echo = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `echo:${q}` });

describe('ToolCallAdvisor', () => {
  test('a return-direct tool ends the loop with its output, without another model round', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'submit', input: { summary: 'done!' } }] }, { text: 'never' }]);
    const submit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true });
    const response = await ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ submit }).build().prompt('go').call().chatResponse();
    assert.equal(response.text, 'done!');
    assert.equal(model.doGenerateCalls.length, 1);
    assert.deepEqual(
      response.messages.map((m) => m.role),
      ['assistant', 'tool'],
    );
  });

  test('return-direct only ends the loop when every call of the batch is return-direct', async () => {
    const model = mockModel([
      {
        toolCalls: [
          { name: 'submit', input: { summary: 's' } },
          { name: 'echo', input: { q: 'a' } },
        ],
      },
      { text: 'final' },
    ]);
    const submit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true });
    const text = await ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ submit, echo }).build().prompt('go').call().content();
    assert.equal(text, 'final');
    assert.equal(model.doGenerateCalls.length, 2);
  });

  test('a loop-ending tool ends the loop after the rest of its round, without another model round, even alongside other tools', async () => {
    const ran: string[] = [];
    const work = tool({
      inputSchema: z.object({ q: z.string() }),
      execute: async ({ q }) => {
        ran.push(q);
        return `did ${q}`;
      },
    });
    const finish = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { endsLoop: true });
    for (const parallel of [true, false]) {
      ran.length = 0;
      const model = mockModel([
        {
          toolCalls: [
            { name: 'work', input: { q: 'before' } },
            { name: 'finish', input: { summary: 'all done' } },
            { name: 'work', input: { q: 'after' } },
          ],
        },
        { text: 'an extra answer nobody asked for' },
      ]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor({ parallel })).defaultTools({ work, finish }).build();
      const response = await client.prompt('go').call().chatResponse();
      assert.equal(response.text, 'all done');
      assert.equal(response.finishReason, 'stop');
      assert.equal(model.doGenerateCalls.length, 1);
      assert.deepEqual(ran.sort(), ['after', 'before']);
      // Every call of the round has its result in the transcript.
      assert.deepEqual(
        response.messages.map((m) => m.role),
        ['assistant', 'tool'],
      );
      assert.equal((response.messages[1]!.content as unknown[]).length, 3);
    }
  });

  test('a loop-ending tool ends a streamed loop too, and the advisor param marks tools by name', async () => {
    const finish = tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'finish', input: { summary: 'streamed summary' } },
          { name: 'echo', input: { q: 'x' } },
        ],
      },
      { text: 'never' },
    ]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ finish, echo }).build();
    const parts: string[] = [];
    for await (const text of client
      .prompt('go')
      .advisors((a) => a.param(LOOP_ENDING_TOOLS, ['finish']))
      .stream()
      .content())
      parts.push(text);
    assert.equal(parts.join(''), 'streamed summary');
    assert.equal(model.doStreamCalls.length, 1);
  });

  test('a loop-ending call that fails, or is refused, ends nothing', async () => {
    const finish = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { endsLoop: true });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'finish', input: { summary: 42 } },
          { name: 'echo', input: { q: 'x' } },
        ],
      },
      { text: 'carried on' },
    ]);
    const text = await ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ finish, echo }).build().prompt('go').call().content();
    assert.equal(text, 'carried on');
    assert.equal(model.doGenerateCalls.length, 2);
    const denied = mockModel([{ toolCalls: [{ name: 'finish', input: { summary: 'too early' } }] }, { text: 'carried on' }]);
    const advisor = new ToolCallAdvisor({ approve: (call) => call.toolName !== 'finish' });
    assert.equal(await ChatClient.builder(denied).defaultAdvisors(advisor).defaultTools({ finish }).build().prompt('go').call().content(), 'carried on');
    assert.equal(denied.doGenerateCalls.length, 2);
  });

  test("parallel calls of one round run concurrently and answer in the model's order", async () => {
    const started: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        started.push(id);
        if (started.length === 2) release();
        await gate; // both must have started before either can finish
        return `done ${id}`;
      },
    });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'slow', input: { id: 'a' } },
          { name: 'slow', input: { id: 'b' } },
        ],
      },
      { text: 'ok' },
    ]);
    await ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ slow }).build().prompt('go').call().content();
    assert.deepEqual(lastToolResults(model.doGenerateCalls[1]!.prompt as never), [
      { type: 'text', value: 'done a' },
      { type: 'text', value: 'done b' },
    ]);
  });

  test('a throwing tool, an unknown tool and invalid arguments become error results the model sees', async () => {
    const boom = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error('disk on fire');
      },
    });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'boom', input: {} },
          { name: 'nope', input: {} },
          { name: 'echo', input: { q: 42 } },
          { name: 'echo', input: '{not json' },
        ],
      },
      { text: 'recovered' },
    ]);
    const text = await ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ boom, echo }).build().prompt('go').call().content();
    assert.equal(text, 'recovered');
    const results = lastToolResults(model.doGenerateCalls[1]!.prompt as never) as Array<{ type: string; value: string }>;
    assert.deepEqual(
      results.map((r) => r.type),
      ['error-text', 'error-text', 'error-text', 'error-text'],
    );
    assert.match(results[0]!.value, /disk on fire/);
    assert.match(results[1]!.value, /Unknown tool "nope".*boom, echo/);
    assert.match(results[2]!.value, /Invalid arguments for tool "echo"/);
    assert.match(results[3]!.value, /not valid JSON/);
  });

  test('the per-tool limit throws a typed error by default', async () => {
    const model = mockModel([
      { toolCalls: [{ name: 'echo', input: { q: '1' } }] },
      { toolCalls: [{ name: 'echo', input: { q: '2' } }] },
      { toolCalls: [{ name: 'echo', input: { q: '3' } }] },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor({ maxCallsPerTool: { echo: 2 } }))
      .defaultTools({ echo })
      .build();
    await assert.rejects(
      client.prompt('go').call().content(),
      (e: unknown) => e instanceof ToolCallLimitExceededError && e.toolName === 'echo' && e.limit === 2,
    );
  });

  test('the total limit can answer the model with an error result instead', async () => {
    const model = mockModel([
      {
        toolCalls: [
          { name: 'echo', input: { q: '1' } },
          { name: 'echo', input: { q: '2' } },
        ],
      },
      { text: 'ok' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor({ maxToolCalls: 1, onLimitExceeded: 'error-result' }))
      .defaultTools({ echo })
      .build();
    assert.equal(await client.prompt('go').call().content(), 'ok');
    const results = lastToolResults(model.doGenerateCalls[1]!.prompt as never) as Array<{ type: string; value: string }>;
    assert.deepEqual(results[0], { type: 'text', value: 'echo:1' });
    assert.equal(results[1]!.type, 'error-text');
    assert.match(results[1]!.value, /limit of 1 tool calls/);
  });

  test('after an error-result limit, later rounds forbid tools, so even toolChoice required ends', async () => {
    const model = mockModel([
      { toolCalls: [{ name: 'echo', input: { q: '1' } }] },
      { toolCalls: [{ name: 'echo', input: { q: '2' } }] },
      { toolCalls: [{ name: 'echo', input: { q: '3' } }] },
      { text: 'what I have' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 2, onLimitExceeded: 'error-result' }))
      .defaultTools({ echo })
      .defaultOptions({ toolChoice: { type: 'required' } })
      .build();
    assert.equal(await client.prompt('go').call().content(), 'what I have');
    assert.deepEqual(
      model.doGenerateCalls.map((c) => c.toolChoice?.type),
      ['required', 'required', 'required', 'none'],
    );
  });

  test('a model that keeps asking for tools in rounds that forbid them is refused once more, then ends the call with the limit error and its spend', async () => {
    // A provider that ignores toolChoice: refusing again and again would bill rounds without end.
    const stubborn = Array.from({ length: 8 }, (_, i) => ({ toolCalls: [{ name: 'echo', input: { q: String(i) } }], inputTokens: 100, outputTokens: 10 }));
    const model = mockModel(stubborn);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxCallsPerTool: { echo: 1 }, onLimitExceeded: 'error-result' }))
      .defaultTools({ echo })
      .build();
    const events: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of client.prompt('go').stream().chatResponse()) events.push(event.type);
      })(),
      (e: unknown) => {
        assert.ok(ToolCallLimitExceededError.isInstance(e), String(e));
        assert.equal(e.toolName, 'echo');
        assert.equal(e.limit, 1);
        assert.equal(e.rounds, 4);
        assert.deepEqual(e.usage, { inputTokens: 400, outputTokens: 40, cachedInputTokens: 0 });
        return true;
      },
    );
    assert.deepEqual(
      model.doStreamCalls.map((c) => c.toolChoice?.type),
      [undefined, undefined, 'none', 'none'],
    );
    const told = lastToolResults(model.doStreamCalls[3]!.prompt as never) as Array<{ type: string; value: string }>;
    assert.match(told[0]!.value, /limit of 1 calls of tool "echo"/);
    assert.ok(!events.includes('finish'));
  });

  test('the limit error thrown by default carries the usage and rounds spent until then', async () => {
    const model = mockModel([
      { toolCalls: [{ name: 'echo', input: { q: '1' } }], inputTokens: 50, outputTokens: 5 },
      { toolCalls: [{ name: 'echo', input: { q: '2' } }], inputTokens: 70, outputTokens: 7 },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxToolCalls: 1 }))
      .defaultTools({ echo })
      .build();
    await assert.rejects(client.prompt('go').call().content(), (e: unknown) => {
      assert.ok(ToolCallLimitExceededError.isInstance(e));
      assert.equal(e.rounds, 2);
      assert.deepEqual(e.usage, { inputTokens: 120, outputTokens: 12, cachedInputTokens: 0 });
      return true;
    });
  });

  test('a tool named like an Object.prototype member is an unknown tool', async () => {
    const model = mockModel([
      {
        toolCalls: [
          { name: 'constructor', input: {} },
          { name: 'toString', input: {} },
          { name: 'hasOwnProperty', input: {} },
        ],
      },
      { text: 'ok' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxCallsPerTool: { echo: 1 } }))
      .defaultTools({ echo })
      .build();
    assert.equal(await client.prompt('go').call().content(), 'ok');
    const results = lastToolResults(model.doGenerateCalls[1]!.prompt as never) as Array<{ type: string; value: string }>;
    assert.deepEqual(
      results.map((r) => r.value),
      [
        'Unknown tool "constructor". Available tools: echo.',
        'Unknown tool "toString". Available tools: echo.',
        'Unknown tool "hasOwnProperty". Available tools: echo.',
      ],
    );
  });

  test('a denied approval is not run and the model is told why', async () => {
    let ran = false;
    const rm = tool({
      inputSchema: z.object({ path: z.string() }),
      execute: async () => {
        ran = true;
        return 'deleted';
      },
    });
    const model = mockModel([{ toolCalls: [{ name: 'rm', input: { path: '/' } }] }, { text: 'ok' }]);
    const approve = (_call: { toolName: string; input: unknown }, ctx: GovernorToolContext) => ({
      approved: false,
      reason: `no deletes in ${ctx.conversationId}`,
    });
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor({ approve })).defaultTools({ rm }).build();
    await client
      .prompt('go')
      .advisors((a) => a.param(CONVERSATION_ID, 'c-1'))
      .call()
      .content();
    assert.equal(ran, false);
    const results = lastToolResults(model.doGenerateCalls[1]!.prompt as never) as Array<{ type: string; value: string }>;
    assert.match(results[0]!.value, /denied by the approver: no deletes in c-1/);
  });

  test('tools get a context with the conversation id, abort signal and request context; listeners hear each call', async () => {
    let seen: GovernorToolContext | undefined;
    const probe = tool({
      inputSchema: z.object({}),
      execute: async (_input, options) => {
        seen = options.context as GovernorToolContext;
        return 'ok';
      },
    });
    const events: string[] = [];
    const listener: ToolCallListener = {
      onToolCallStart: (e) => events.push(`start ${e.toolName} ${e.sessionId}`),
      onToolCallEnd: (e) => events.push(`end ${e.toolName} ${String(e.result)}`),
      onToolCallError: (e) => events.push(`error ${e.toolName}`),
    };
    const controller = new AbortController();
    const model = mockModel([{ toolCalls: [{ name: 'probe', input: {} }] }, { text: 'ok' }]);
    await ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor({ listeners: [listener] }))
      .defaultTools({ probe })
      .build()
      .prompt('go')
      .abortSignal(controller.signal)
      .advisors((a) => a.param(CONVERSATION_ID, 'c-9').param('tenant', 't1'))
      .call()
      .content();
    assert.equal(seen?.conversationId, 'c-9');
    assert.equal(seen?.abortSignal, controller.signal);
    assert.equal(seen?.requestContext.get('tenant'), 't1');
    assert.deepEqual(events, ['start probe c-9', 'end probe ok']);
  });

  test('listeners hear a call that could not run (an unknown tool, input not valid) through onToolCallRefused; a call the breaker blocked they do not', async () => {
    const probe = tool({ inputSchema: z.object({ n: z.number() }), execute: async ({ n }) => `n=${n}` });
    const events: string[] = [];
    const listener: ToolCallListener = {
      onToolCallStart: (e) => events.push(`start ${e.toolName}`),
      onToolCallEnd: (e) => events.push(`end ${e.toolName}`),
      onToolCallError: (e) => events.push(`error ${e.toolName}`),
      onToolCallRefused: (e) =>
        events.push(`refused ${e.toolName} ${e.sessionId} ${(e.error as Error).name}: ${e.message.split('\n')[0]} ${JSON.stringify(e.args)}`),
    };
    const same = { toolCalls: [{ name: 'probe', input: { n: 1 } }] };
    const model = mockModel([
      { toolCalls: [{ name: 'browse', input: { url: 'x' } }] },
      { toolCalls: [{ name: 'probe', input: { n: 'one' } }] },
      same,
      same,
      same,
      same,
      { text: 'done' },
    ]);
    await ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor({ listeners: [listener] }), new AgentBreaker())
      .defaultTools({ probe })
      .build()
      .prompt('go')
      .advisors((a) => a.param(CONVERSATION_ID, 'c-7'))
      .call()
      .content()
      .catch(() => undefined);
    assert.equal(events[0], 'refused browse c-7 AI_NoSuchToolError: Unknown tool "browse". Available tools: probe. {"url":"x"}');
    assert.match(events[1]!, /^refused probe c-7 AI_InvalidToolInputError: .* \{"n":"one"\}$/);
    // The 4th identical call is blocked: not run, and not heard as refused.
    assert.deepEqual(events.slice(2), ['start probe', 'end probe', 'start probe', 'end probe', 'start probe', 'end probe']);
  });

  test("a tool's toModelOutput shapes what the model is sent, as in the AI SDK; listeners hear the tool's own result", async () => {
    const png = Buffer.from('not really a png').toString('base64');
    const screenshot = tool({
      inputSchema: z.object({ page: z.string() }),
      execute: async ({ page }) => ({ page, png }),
      toModelOutput: ({ output, input, toolCallId }) => ({
        type: 'content',
        value: [
          { type: 'text', text: `${toolCallId}: ${input.page}` },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: output.png } },
        ],
      }),
    });
    const throwing = tool({
      inputSchema: z.object({}),
      execute: async () => 'fine',
      toModelOutput: () => {
        throw new Error('cannot shape');
      },
    });
    const heard: unknown[] = [];
    for (const mode of MODES) {
      const model = mockModel([
        {
          toolCalls: [
            { name: 'screenshot', input: { page: 'home' } },
            { name: 'throwing', input: {} },
          ],
        },
        { text: 'a home page' },
      ]);
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor({ listeners: [{ onToolCallEnd: (e) => void heard.push(e.result) }] }))
        .defaultTools({ screenshot, throwing })
        .build();
      assert.equal((await runMode(client.prompt('look'), mode)).text, 'a home page', mode);
      const calls = mode === 'call' ? model.doGenerateCalls : model.doStreamCalls;
      const [shaped, failed] = lastToolResults(calls[1]!.prompt as never) as Array<{ type: string; value: unknown }>;
      assert.equal(shaped!.type, 'content', mode);
      const [caption, image] = shaped!.value as Array<Record<string, unknown>>;
      assert.deepEqual(caption, { type: 'text', text: 'call-1-0: home' });
      assert.deepEqual([image!['type'], image!['mediaType'], image!['data']], ['file', 'image/png', { type: 'data', data: png }]);
      assert.equal(failed!.type, 'error-text', mode);
      assert.match(String(failed!.value), /cannot shape/);
    }
    assert.deepEqual(heard, [
      { page: 'home', png },
      { page: 'home', png },
    ]);
  });

  test("a steer on a call whose tool shapes its output is told after the tool's content", async () => {
    const screenshot = tool({
      inputSchema: z.object({ page: z.string() }),
      execute: async () => 'the same picture',
      toModelOutput: ({ output }) => ({
        type: 'content',
        value: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: Buffer.from(output).toString('base64') } }],
      }),
    });
    const rounds = Array.from({ length: 6 }, () => ({ toolCalls: [{ name: 'screenshot', input: { page: 'home' } }] }));
    const model = mockModel([...rounds, { text: 'done' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker()).defaultTools({ screenshot }).build();
    await client
      .prompt('look')
      .call()
      .content()
      .catch(() => undefined);
    const steered = model.doGenerateCalls
      .slice(1)
      .map((c) => lastToolResults(c.prompt as never)[0] as { type: string; value: Array<{ type: string; text?: string }> })
      .filter((output) => output.type === 'content' && output.value.length > 1);
    assert.ok(steered.length > 0, 'a call was steered');
    for (const output of steered) {
      assert.deepEqual(
        output.value.map((part) => part.type),
        ['file', 'text'],
      );
      assert.match(output.value[1]!.text!, /^\[AgentBreaker\] /);
    }
  });

  test("a steer reaches the model only: tool-result events and listeners keep the tool's own object", async () => {
    const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async ({ job }) => ({ job, status: 'queued' }) });
    const rounds = Array.from({ length: 4 }, () => ({ toolCalls: [{ name: 'status', input: { job: 'j-1' } }] }));
    const model = mockModel([...rounds, { text: 'done' }]);
    const heard: unknown[] = [];
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ listeners: [{ onToolCallEnd: (e) => void heard.push(e.result) }] }), new AgentBreaker())
      .defaultTools({ status })
      .build();
    const events: unknown[] = [];
    try {
      for await (const event of client.prompt('status?').stream().chatResponse()) if (event.type === 'tool-result' && !event.isError) events.push(event.output);
    } catch {
      // The breaker may stop the spiral after steering it.
    }
    const sent = model.doStreamCalls.slice(1).map((c) => lastToolResults(c.prompt as never)[0] as { type: string; value: unknown });
    const steered = sent.filter((output) => output.type === 'text' && String(output.value).includes('[AgentBreaker]'));
    assert.ok(steered.length > 0, 'the model was sent a steer');
    assert.match(String(steered[0]!.value), /^\{"job":"j-1","status":"queued"\}\n\n\[AgentBreaker\] /);
    assert.ok(events.length >= 3);
    for (const output of [...events, ...heard]) assert.deepEqual(output, { job: 'j-1', status: 'queued' });
  });

  test('an abort during a tool stops the loop with the abort reason', async () => {
    const controller = new AbortController();
    const hang = tool({
      inputSchema: z.object({}),
      execute: (_i, { abortSignal }) => new Promise((_, reject) => abortSignal?.addEventListener('abort', () => reject(abortSignal.reason))),
    });
    const model = mockModel([{ toolCalls: [{ name: 'hang', input: {} }] }, { text: 'never' }]);
    const pending = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallAdvisor())
      .defaultTools({ hang })
      .build()
      .prompt('go')
      .abortSignal(controller.signal)
      .call()
      .content();
    setTimeout(() => controller.abort(new Error('stop now')), 10);
    await assert.rejects(pending, /stop now/);
    assert.equal(model.doGenerateCalls.length, 1);
  });

  test('bad options are rejected at construction, naming the option', () => {
    assert.throws(
      () => new ToolCallAdvisor({ maxToolCalls: 0 }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'maxToolCalls',
    );
    assert.throws(
      () => new ToolCallAdvisor({ maxCallsPerTool: { echo: -1 } }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'maxCallsPerTool.echo',
    );
  });

  test('a listener hook that is not a function, or a listener without any hook, is refused, naming it', () => {
    const bad: Array<[unknown, string, RegExp]> = [
      [[{ onToolCallStart: 5 }], 'listeners[0].onToolCallStart', /must be a function, got 5/],
      [[{ onToolCallEnd: () => {} }, { onToolCallError: 'log' }], 'listeners[1].onToolCallError', /must be a function/],
      [[{ onToolStart: () => {} }], 'listeners[0]', /at least one of onToolCallStart, onToolCallEnd, onToolCallError.*onToolStart/],
      [[{}], 'listeners[0]', /empty object/],
      [[null], 'listeners[0]', /must be an object/],
    ];
    for (const [listeners, option, message] of bad) {
      assert.throws(
        () => new ToolCallAdvisor({ listeners: listeners as never }),
        (e: unknown) => e instanceof InvalidOptionError && e.option === option && message.test(e.message),
        `expected InvalidOptionError naming ${option}`,
      );
    }
  });

  test('a listener may carry state and other keys, and have its hooks on its prototype', async () => {
    class Recorder {
      readonly names: string[] = [];
      onRetry(): void {}
      onToolCallEnd(e: { toolName: string }): void {
        this.names.push(e.toolName);
      }
    }
    const recorder = new Recorder();
    const model = mockModel([{ toolCalls: [{ name: 'echo', input: { q: 'a' } }] }, { text: 'done' }]);
    await ChatClient.builder(model)
      .defaultAdvisors(
        new ToolCallAdvisor({ listeners: [recorder, { onToolCallStart: undefined, onToolCallEnd: () => {}, label: 'metrics' } as ToolCallListener] }),
      )
      .defaultTools({ echo })
      .build()
      .prompt('go')
      .call()
      .content();
    assert.deepEqual(recorder.names, ['echo']);
  });
});

/** Every tool call of the conversation has exactly one result. */
function assertWellFormed(messages: readonly ModelMessage[]): void {
  const calls = messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((p) => p.type === 'tool-call') : []));
  const results = messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
  assert.deepEqual(results.map((r) => r.toolCallId).sort(), calls.map((c) => c.toolCallId).sort());
}

describe('ToolCallAdvisor: a loop-ending tool called with a call that needs approval', () => {
  /** One answer calling `refund` (needs approval) and `finish` (ends the loop); a second answer that must never be asked for. */
  function setUp(options: { readonly returnDirect?: boolean; readonly memory?: MessageWindowChatMemory } = {}) {
    const refunds: number[] = [];
    const refund = tool({
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: async ({ amount }) => {
        refunds.push(amount);
        return `refunded ${amount}`;
      },
    });
    const finish = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), {
      endsLoop: true,
      returnDirect: options.returnDirect === true,
    });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'refund', input: { amount: 250 } },
          { name: 'finish', input: { summary: 'refund requested' } },
        ],
      },
      { text: 'an extra answer nobody asked for' },
      { text: 'You are welcome.' },
    ]);
    const advisors =
      options.memory === undefined ? [new ToolCallingAdvisor()] : [new MessageChatMemoryAdvisor({ memory: options.memory }), new ToolCallingAdvisor()];
    const client = ChatClient.builder(model)
      .defaultAdvisors(...advisors)
      .defaultTools({ refund, finish })
      .build();
    const modelCalls = () => model.doGenerateCalls.length + model.doStreamCalls.length;
    return { client, model, refunds, modelCalls };
  }

  const answerAll = (response: ChatResponse, approved: boolean): ModelMessage =>
    toolApprovalResponse(
      (response.pendingApprovals ?? []).map((p) => ({ approvalId: p.approvalId, approved, ...(approved ? {} : { reason: 'over the limit' }) })),
    );

  for (const mode of MODES) {
    for (const returnDirect of [false, true]) {
      test(`${mode}${returnDirect ? ', return-direct finish' : ''}: approved, the call runs and the loop ends with the loop-ending output, without another model round`, async () => {
        const { client, refunds, modelCalls } = setUp({ returnDirect });
        const history: ModelMessage[] = [{ role: 'user', content: 'Refund 250, then finish' }];
        const first = await runMode(client.prompt().messages(...history), mode);
        assert.equal(first.response.pendingApprovals?.length, 1, 'the loop pauses for the approval');
        assert.equal(modelCalls(), 1);
        assert.deepEqual(refunds, []);

        const answer = answerAll(first.response, true);
        const second = await runMode(client.prompt().messages(...history, ...first.response.messages, answer), mode);
        assert.equal(modelCalls(), 1, 'no model round after the loop-ending tool ran');
        assert.equal(second.text, 'refund requested');
        assert.equal(second.response.finishReason, 'stop');
        assert.deepEqual(second.response.pendingApprovals ?? [], []);
        assert.deepEqual(refunds, [250], 'the approved call ran once');
        assertWellFormed([...history, ...first.response.messages, ...second.response.messages]);
      });
    }

    test(`${mode}: denied, the call gets its execution-denied result and the loop still ends with the loop-ending output`, async () => {
      const { client, refunds, modelCalls } = setUp();
      const history: ModelMessage[] = [{ role: 'user', content: 'Refund 250, then finish' }];
      const first = await runMode(client.prompt().messages(...history), mode);
      const second = await runMode(client.prompt().messages(...history, ...first.response.messages, answerAll(first.response, false)), mode);
      assert.equal(modelCalls(), 1);
      assert.equal(second.text, 'refund requested');
      assert.deepEqual(refunds, []);
      if (mode === 'stream') {
        // As the AI SDK's stream says `tool-output-denied`: a UI can close the call's card.
        assert.deepEqual(
          second.events.filter((e) => e.type === 'tool-result'),
          [{ type: 'tool-result', toolCallId: 'call-1-0', toolName: 'refund', output: 'over the limit', isError: true, denied: true }],
        );
      }
      const results = second.response.messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
      assert.deepEqual(
        results.map((r) => [r.toolName, r.output]),
        [['refund', { type: 'execution-denied', reason: 'over the limit' }]],
      );
      assertWellFormed([...history, ...first.response.messages, ...second.response.messages]);
    });

    test(`${mode}: return-direct is judged on the whole round, the calls that ran before the pause included`, async () => {
      const refund = Object.assign(
        tool({ inputSchema: z.object({ amount: z.number() }), needsApproval: true, execute: async ({ amount }) => `refunded ${amount}` }),
        { returnDirect: true },
      );
      const note = Object.assign(tool({ inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `noted ${text}` }), { returnDirect: true });
      const shaped = Object.assign(
        tool({
          inputSchema: z.object({ text: z.string() }),
          execute: async ({ text }) => ({ text }),
          toModelOutput: ({ output }) => ({ type: 'content', value: [{ type: 'text', text: `shaped ${output.text}` }] }),
        }),
        { returnDirect: true },
      );
      const resumeAfter = async (alongside: { name: string; input: unknown }) => {
        const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 250 } }, alongside] }, { text: 'the model answered' }]);
        const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ refund, note, shaped, echo }).build();
        const history: ModelMessage[] = [{ role: 'user', content: 'go' }];
        const first = await runMode(client.prompt().messages(...history), mode);
        const second = await runMode(client.prompt().messages(...history, ...first.response.messages, answerAll(first.response, true)), mode);
        return { text: second.text, modelCalls: model.doGenerateCalls.length + model.doStreamCalls.length };
      };
      // Every call of the round return-direct: the loop ends with their outputs, in the model's order.
      assert.deepEqual(await resumeAfter({ name: 'note', input: { text: 'x' } }), { text: 'refunded 250\nnoted x', modelCalls: 1 });
      // A call whose tool shapes its output ran too: its text is its part of the answer.
      assert.deepEqual(await resumeAfter({ name: 'shaped', input: { text: 'x' } }), { text: 'refunded 250\nshaped x', modelCalls: 1 });
      // Alongside a call that is not, return-direct does nothing (Spring AI's meaning): the model answers.
      assert.deepEqual(await resumeAfter({ name: 'echo', input: { q: 'x' } }), { text: 'the model answered', modelCalls: 2 });
    });

    test(`${mode}: with chat memory, the stored conversation is complete after the resumed call and a later turn goes on from it`, async () => {
      const memory = new MessageWindowChatMemory();
      const { client, model, refunds, modelCalls } = setUp({ memory });
      const inConversation = (spec: ChatClientRequestSpec): ChatClientRequestSpec => spec.advisors((a) => a.param(CONVERSATION_ID, `ends-${mode}`));
      const first = await runMode(inConversation(client.prompt('Refund 250, then finish')), mode);
      // Only the answer: the memory puts the conversation back.
      const second = await runMode(inConversation(client.prompt().messages(answerAll(first.response, true))), mode);
      assert.equal(second.text, 'refund requested');
      assert.equal(modelCalls(), 1);
      assert.deepEqual(refunds, [250]);
      const stored = await memory.get(`ends-${mode}`);
      assertWellFormed(stored);

      // The extra answer the loop skipped is still the script's next one.
      assert.equal((await runMode(inConversation(client.prompt('Thanks')), mode)).text, 'an extra answer nobody asked for');
      assert.equal(modelCalls(), 2);
      const sent = (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).at(-1)!.prompt;
      const results = sent.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
      assert.deepEqual(
        results.map((r) => r.toolName),
        ['finish', 'refund'],
        'the later turn sends each call of the paused round with its result',
      );
      assert.equal(sent.at(-1)?.role, 'user');
      assertWellFormed(await memory.get(`ends-${mode}`));
    });
  }
});

describe('ToolCallingAdvisor: a tool that ran but returned what cannot be sent', () => {
  for (const mode of MODES) {
    test(`${mode}: the model reads an error naming the tool; the call goes on and its round is stored whole`, async () => {
      let charges = 0;
      const charge = tool({
        inputSchema: z.object({ amount: z.number() }),
        execute: async ({ amount }) => {
          charges++;
          // An SDK object whose lazy getter fails once detached from its client.
          return {
            charged: amount,
            get receipt(): string {
              throw new Error('receipt getter exploded');
            },
          };
        },
      });
      const model = mockModel([{ toolCalls: [{ name: 'charge', input: { amount: 20 } }] }, { text: 'Charged, but the receipt is unavailable.' }]);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
        .defaultTools({ charge })
        .build();
      const { text, events } = await runMode(
        client.prompt('Charge 20').advisors((a) => a.param(CONVERSATION_ID, `charge-${mode}`)),
        mode,
      );
      assert.equal(text, 'Charged, but the receipt is unavailable.');
      assert.equal(charges, 1);
      const sent = (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).at(-1)!.prompt;
      const result = sent.flatMap((m) => (m.role === 'tool' ? m.content : [])).find((p) => p.type === 'tool-result');
      assert.deepEqual(result?.output, {
        type: 'error-text',
        value: 'Tool "charge" failed: its result cannot be sent as JSON (receipt getter exploded)',
      });
      if (mode === 'stream') {
        const shown = events.find((e) => e.type === 'tool-result');
        assert.equal(shown?.type === 'tool-result' && shown.isError, true, 'the stream does not show the call as a success');
      }
      const stored = await memory.get(`charge-${mode}`);
      assert.deepEqual(
        stored.map((m) => m.role),
        ['user', 'assistant', 'tool', 'assistant'],
      );
    });
  }
});

describe('ToolCallingAdvisor: streamed results of parallel calls', () => {
  test("each result streams as its call ends, as streamText sends them: a fast tool's does not wait for a slow one", async () => {
    const ended: string[] = [];
    const after = (name: string, ms: number) =>
      tool({
        inputSchema: z.object({}),
        execute: async () => {
          await new Promise((resolve) => setTimeout(resolve, ms));
          ended.push(name);
          return `${name} done`;
        },
      });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'slow', input: {} },
          { name: 'fast', input: {} },
        ],
      },
      { text: 'both done' },
    ]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ slow: after('slow', 300), fast: after('fast', 10) })
      .build();
    const seen: string[] = [];
    for await (const event of client.prompt('go').stream().chatResponse()) {
      // What had ended when each result arrived: the fast one's must not wait for the slow tool.
      if (event.type === 'tool-result') seen.push(`${event.toolName} (ended: ${ended.join(', ')})`);
    }
    assert.deepEqual(seen, ['fast (ended: fast)', 'slow (ended: fast, slow)']);
    // The model is still sent the results in the order it asked for them.
    const results = model.doStreamCalls
      .at(-1)!
      .prompt.flatMap((m) => (m.role === 'tool' ? m.content.map((p) => (p.type === 'tool-result' ? p.toolName : '')) : []));
    assert.deepEqual(results, ['slow', 'fast']);
  });
});
