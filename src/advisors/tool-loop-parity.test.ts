/**
 * The tool loop does what the AI SDK's generateText/streamText do with the
 * same tools: client-side tools (no `execute`) end the loop for the caller
 * to run, a call is checked before approval, tool outputs and throws reach
 * the model as JSON, `onInputAvailable` is called, and an approved tool sees
 * the approval answer in its messages.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LanguageModelV4Prompt } from '@ai-sdk/provider';
import type { MockLanguageModelV4 } from 'ai/test';
import { stepCountIs, streamText, tool, type ModelMessage, type ToolResultPart } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolCallingAdvisor,
  toolApprovalResponse,
  type ToolCallRequest,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';

/** The prompts the model was sent, in order. */
function prompts(model: MockLanguageModelV4, mode: Mode): LanguageModelV4Prompt[] {
  return (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls).map((c) => c.prompt);
}

/** Every tool result of `messages`, by call id, in order. */
function resultsOf(messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): Array<{ id: string; output: unknown }> {
  return messages.flatMap((m) =>
    m.role === 'tool' && Array.isArray(m.content)
      ? (m.content as Array<{ type: string; toolCallId?: string; output?: unknown }>).flatMap((p) =>
          p.type === 'tool-result' ? [{ id: p.toolCallId!, output: p.output }] : [],
        )
      : [],
  );
}

/** Every tool call id of `messages`' assistant turns, in order. */
function callIdsOf(messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): string[] {
  return messages.flatMap((m) =>
    m.role === 'assistant' && Array.isArray(m.content)
      ? (m.content as Array<{ type: string; toolCallId?: string }>).flatMap((p) => (p.type === 'tool-call' ? [p.toolCallId!] : []))
      : [],
  );
}

/** Each call has exactly one result, after it. */
function assertOneResultPerCall(messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): void {
  const calls = callIdsOf(messages);
  const results = resultsOf(messages).map((r) => r.id);
  assert.deepEqual([...results].sort(), [...calls].sort(), `one result per call: calls ${calls.join(', ')}, results ${results.join(', ')}`);
}

/** A client-side tool: no `execute`, the caller runs it. */
const askUser = tool({ description: 'ask the user', inputSchema: z.object({ question: z.string() }) });

function lookupTool(ran: string[]) {
  return tool({
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }) => {
      ran.push(id);
      return `order ${id}: shipped`;
    },
  });
}

const CLIENT_ROUND = {
  toolCalls: [
    { name: 'lookup', input: { id: 'A1' }, id: 'l1' },
    { name: 'askUser', input: { question: 'Refund it?' }, id: 'ask1' },
  ],
};
const USER_SAID_YES: ModelMessage = {
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: 'ask1', toolName: 'askUser', output: { type: 'text', value: 'yes' } }],
};

describe('client-side tools (no execute) under the ToolCallingAdvisor', () => {
  for (const mode of MODES) {
    test(`${mode}: the round's other calls run, and the loop ends handing the client-side calls to the caller`, async () => {
      const ran: string[] = [];
      const model = mockModel([CLIENT_ROUND, { text: 'Refunded.' }]);
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor())
        .defaultTools({ lookup: lookupTool(ran), askUser })
        .build();

      const first = await runMode(client.prompt('Refund order A1'), mode);
      assert.equal(prompts(model, mode).length, 1, 'no model round after the client-side call');
      assert.deepEqual(ran, ['A1']);
      assert.equal(first.response.finishReason, 'tool-calls');
      assert.deepEqual(
        first.response.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]),
        [['ask1', 'askUser', { question: 'Refund it?' }]],
      );
      assert.deepEqual(
        first.response.messages.map((m) => m.role),
        ['assistant', 'tool'],
      );
      assert.deepEqual(resultsOf(first.response.messages), [{ id: 'l1', output: { type: 'text', value: 'order A1: shipped' } }]);
      if (mode === 'stream') {
        assert.deepEqual(
          first.events.flatMap((e) => (e.type === 'tool-result' ? [e.toolCallId] : [])),
          ['l1'],
          'only the call that ran has a result event',
        );
      }

      const second = await runMode(client.prompt().messages({ role: 'user', content: 'Refund order A1' }, ...first.response.messages, USER_SAID_YES), mode);
      assert.equal(second.text, 'Refunded.');
      assert.deepEqual(ran, ['A1'], 'the tool that ran is not run again');
      const sent = prompts(model, mode)[1]!;
      assertOneResultPerCall(sent);
      assert.deepEqual(resultsOf(sent).at(-1), { id: 'ask1', output: { type: 'text', value: 'yes' } });
    });

    test(`${mode}: with chat memory, the conversation stays well-formed across the two requests; no result is lost or doubled`, async () => {
      const ran: string[] = [];
      const model = mockModel([CLIENT_ROUND, { text: 'Refunded.' }, { text: 'You are welcome.' }]);
      const memory = new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository() });
      const client = ChatClient.builder(model)
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
        .defaultTools({ lookup: lookupTool(ran), askUser })
        .defaultAdvisorParams({ [CONVERSATION_ID]: `client-side-${mode}` })
        .build();

      const first = await runMode(client.prompt('Refund order A1'), mode);
      assert.deepEqual(
        first.response.toolCalls.map((c) => c.toolCallId),
        ['ask1'],
      );
      const second = await runMode(client.prompt().messages(USER_SAID_YES), mode);
      assert.equal(second.text, 'Refunded.');
      assertOneResultPerCall(prompts(model, mode)[1]!);

      const stored = await memory.get(`client-side-${mode}`);
      assert.deepEqual(
        stored.map((m) => m.role),
        ['user', 'assistant', 'tool', 'tool', 'assistant'],
      );
      assertOneResultPerCall(stored);

      assert.equal((await runMode(client.prompt('Thanks'), mode)).text, 'You are welcome.');
      const third = prompts(model, mode)[2]!;
      assertOneResultPerCall(third);
      assert.deepEqual(
        resultsOf(third).map((r) => r.id),
        ['l1', 'ask1'],
      );
      assert.deepEqual(ran, ['A1']);
    });

    test(`${mode}: an AgentBreaker hears the client-side call once, with the result the caller sent, not as a failure`, async () => {
      const model = mockModel([CLIENT_ROUND, { text: 'Refunded.' }]);
      const breaker = new AgentBreaker();
      const heard: unknown[] = [];
      const recorder = {
        name: 'recorder',
        order: 0,
        adviseCall: (request: Parameters<typeof breaker.adviseCall>[0], chain: Parameters<typeof breaker.adviseCall>[1]) => chain.nextCall(request),
        adviseStream: (request: Parameters<typeof breaker.adviseCall>[0], chain: Parameters<typeof breaker.adviseCall>[1]) => chain.nextStream(request),
        observe: (_sessionId: string, event: unknown) => {
          heard.push(event);
        },
      };
      const session = `client-side-breaker-${mode}`;
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor(), breaker, recorder)
        .defaultTools({ lookup: lookupTool([]), askUser })
        .defaultAdvisorParams({ [CONVERSATION_ID]: session })
        .build();
      const toolEvents = () => heard.filter((e) => (e as { kind: string }).kind === 'tool_call');

      const first = await runMode(client.prompt('Refund order A1'), mode);
      assert.deepEqual(
        toolEvents().map((e) => (e as { tool: string }).tool),
        ['lookup'],
        'the pending client-side call is not reported',
      );
      assert.equal((await breaker.snapshot(session)).counters.toolCalls, 1);

      await runMode(client.prompt().messages({ role: 'user', content: 'Refund order A1' }, ...first.response.messages, USER_SAID_YES), mode);
      assert.deepEqual(toolEvents().slice(1), [{ kind: 'tool_call', tool: 'askUser', args: { question: 'Refund it?' }, result: 'yes', error: false }]);
      assert.equal((await breaker.snapshot(session)).counters.toolCalls, 2);
    });
  }

  for (const mode of MODES) {
    test(`${mode}: a round with a call waiting for approval and a client-side call is answered by one tool message with both`, async () => {
      const ran: string[] = [];
      const refund = tool({
        inputSchema: z.object({ id: z.string() }),
        needsApproval: true,
        execute: async ({ id }) => {
          ran.push(`refund ${id}`);
          return 'refunded';
        },
      });
      const model = mockModel([
        {
          toolCalls: [
            { name: 'refund', input: { id: 'A1' }, id: 'r1' },
            { name: 'askUser', input: { question: 'Why?' }, id: 'ask1' },
          ],
        },
        { text: 'Done.' },
      ]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ refund, askUser }).build();
      const first = (await runMode(client.prompt('Refund A1'), mode)).response;
      assert.equal(first.pendingApprovals?.length, 1);
      assert.deepEqual(
        first.toolCalls.map((c) => c.toolCallId),
        ['ask1'],
      );
      const answers: ModelMessage = {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: first.pendingApprovals![0]!.approvalId, approved: true },
          { type: 'tool-result', toolCallId: 'ask1', toolName: 'askUser', output: { type: 'text', value: 'broken' } },
        ],
      };
      const second = await runMode(client.prompt().messages({ role: 'user', content: 'Refund A1' }, ...first.messages, answers), mode);
      assert.equal(second.text, 'Done.');
      assert.deepEqual(ran, ['refund A1']);
      const sent = prompts(model, mode)[1]!;
      assertOneResultPerCall(sent);
    });
  }

  test('client-side calls count towards the limits: over the limit, the model is told and the call is not handed out', async () => {
    const model = mockModel([
      {
        toolCalls: [
          { name: 'askUser', input: { question: 'one?' }, id: 'a1' },
          { name: 'askUser', input: { question: 'two?' }, id: 'a2' },
        ],
      },
    ]);
    const response = await ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor({ maxCallsPerTool: { askUser: 1 }, onLimitExceeded: 'error-result' }))
      .defaultTools({ askUser })
      .build()
      .prompt('go')
      .call()
      .chatResponse();
    assert.deepEqual(
      response.toolCalls.map((c) => c.toolCallId),
      ['a1'],
    );
    const results = resultsOf(response.messages);
    assert.deepEqual(
      results.map((r) => r.id),
      ['a2'],
    );
    assert.match(JSON.stringify(results[0]!.output), /limit of 1 calls of tool \\"askUser\\"/);
  });

  test('a client-side call that needs approval is handed to the caller once approved', async () => {
    const confirm = tool({ inputSchema: z.object({ question: z.string() }), needsApproval: true });
    const model = mockModel([{ toolCalls: [{ name: 'confirm', input: { question: 'sure?' }, id: 'c1' }] }, { text: 'ok' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ confirm }).build();
    const first = await client.prompt('go').call().chatResponse();
    assert.equal(first.pendingApprovals?.length, 1);
    assert.deepEqual(first.toolCalls, []);
    const answer = toolApprovalResponse([{ approvalId: first.pendingApprovals![0]!.approvalId, approved: true }]);
    const second = await client
      .prompt()
      .messages({ role: 'user', content: 'go' }, ...first.messages, answer)
      .call()
      .chatResponse();
    assert.equal(model.doGenerateCalls.length, 1, 'no model round before the caller has run it');
    assert.equal(second.finishReason, 'tool-calls');
    assert.deepEqual(
      second.toolCalls.map((c) => c.toolCallId),
      ['c1'],
    );
    assert.deepEqual(resultsOf(second.messages), [], 'no result: the caller sends it');
  });

  test('an unknown tool is still answered with an error result, and the loop goes on', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'nope', input: {}, id: 'n1' }] }, { text: 'sorry' }]);
    const response = await ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ askUser })
      .build()
      .prompt('go')
      .call()
      .chatResponse();
    assert.equal(response.text, 'sorry');
    assert.deepEqual(response.toolCalls, []);
    assert.match(JSON.stringify(resultsOf(response.messages)[0]!.output), /Unknown tool \\"nope\\"/);
  });
});

describe('a call is checked before it is approved', () => {
  const refundTool = (seen: unknown[]) =>
    tool({
      inputSchema: z.object({ amount: z.number(), currency: z.string().default('EUR') }),
      needsApproval: async (input) => {
        seen.push(input);
        return true;
      },
      execute: async ({ amount, currency }) => `refunded ${amount} ${currency}`,
    });

  for (const mode of MODES) {
    test(`${mode}: an invalid call gets its error result without asking for approval`, async () => {
      const seen: unknown[] = [];
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 'lots' }, id: 'r1' }] }, { text: 'I could not.' }]);
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor())
        .defaultTools({ refund: refundTool(seen) })
        .build();
      const { response } = await runMode(client.prompt('refund'), mode);
      assert.deepEqual(seen, [], 'needsApproval is not asked about an invalid call');
      assert.equal(response.pendingApprovals, undefined);
      assert.equal(response.text, 'I could not.');
      const [result] = resultsOf(prompts(model, mode)[1]!);
      assert.equal((result!.output as { type: string }).type, 'error-text');
      assert.match((result!.output as { value: string }).value, /^Invalid arguments for tool "refund"/);
    });

    test(`${mode}: needsApproval gets the parsed input, schema defaults applied`, async () => {
      const seen: unknown[] = [];
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 5 }, id: 'r1' }] }]);
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor())
        .defaultTools({ refund: refundTool(seen) })
        .build();
      const { response } = await runMode(client.prompt('refund'), mode);
      assert.deepEqual(seen, [{ amount: 5, currency: 'EUR' }]);
      assert.equal(response.pendingApprovals?.length, 1);
    });
  }

  test("the approver is not asked about invalid calls, and gets a valid call's parsed input", async () => {
    const asked: ToolCallRequest[] = [];
    const refund = tool({
      inputSchema: z.object({ amount: z.number(), currency: z.string().default('EUR') }),
      execute: async ({ amount, currency }) => `refunded ${amount} ${currency}`,
    });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'refund', input: { amount: 'lots' }, id: 'bad' },
          { name: 'refund', input: { amount: 5 }, id: 'good' },
        ],
      },
      { text: 'done' },
    ]);
    const approve = (call: ToolCallRequest) => {
      asked.push(call);
      return true;
    };
    await ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor({ approve })).defaultTools({ refund }).build().prompt('go').call().content();
    assert.deepEqual(
      asked.map((c) => [c.toolCallId, c.input]),
      [['good', { amount: 5, currency: 'EUR' }]],
    );
  });
});

describe('what the model is sent for a tool output or a throw', () => {
  for (const mode of MODES) {
    test(`${mode}: a thrown non-Error value is shown as JSON text`, async () => {
      const boom = tool({
        inputSchema: z.object({}),
        execute: async (): Promise<string> => {
          throw { reason: 'quota', retryAfter: 3 };
        },
      });
      const huge = tool({
        inputSchema: z.object({}),
        execute: async (): Promise<string> => {
          throw { blob: 'x'.repeat(50_000) };
        },
      });
      const model = mockModel([
        {
          toolCalls: [
            { name: 'boom', input: {}, id: 'b1' },
            { name: 'huge', input: {}, id: 'h1' },
          ],
        },
        { text: 'done' },
      ]);
      await runMode(ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ boom, huge }).build().prompt('go'), mode);
      const [b1, h1] = resultsOf(prompts(model, mode)[1]!).map((r) => r.output as { type: string; value: string });
      assert.deepEqual(b1, { type: 'error-text', value: 'Tool "boom" failed: {"reason":"quota","retryAfter":3}' });
      assert.equal(h1!.type, 'error-text');
      assert.ok(h1!.value.startsWith('Tool "huge" failed: {"blob":"xxx'), h1!.value.slice(0, 60));
      assert.ok(h1!.value.length < 2_000, `bounded: ${h1!.value.length} characters`);
    });

    test(`${mode}: outputs that are not JSON values reach the messages and the model as plain JSON`, async () => {
      class Point {
        x = 1;
        y = 2;
        get sum(): number {
          return this.x + this.y;
        }
      }
      const when = new Date('2024-05-01T12:00:00Z');
      const values: Record<string, () => unknown> = {
        date: () => when,
        map: () => new Map([['a', 1]]),
        point: () => new Point(),
        custom: () => ({ toJSON: () => 'custom' }),
        nested: () => ({ when, gone: undefined, list: [undefined, 1], nan: Number.NaN, inf: Number.POSITIVE_INFINITY }),
        nothing: () => undefined,
      };
      const tools = Object.fromEntries(
        Object.entries(values).map(([name, value]) => [name, tool({ inputSchema: z.object({}), execute: async () => value() })]),
      );
      const model = mockModel([{ toolCalls: Object.keys(values).map((name, i) => ({ name, input: {}, id: `c${i}` })) }, { text: 'done' }]);
      const { response } = await runMode(ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(tools).build().prompt('go'), mode);
      const expected = [
        { type: 'json', value: '2024-05-01T12:00:00.000Z' },
        { type: 'json', value: {} },
        { type: 'json', value: { x: 1, y: 2 } },
        { type: 'json', value: 'custom' },
        { type: 'json', value: { when: '2024-05-01T12:00:00.000Z', list: [null, 1], nan: null, inf: null } },
        { type: 'json', value: null },
      ];
      const inMessages = resultsOf(response.messages).map((r) => r.output);
      assert.deepEqual(inMessages, expected);
      // Plain data all the way down: what a store keeps and reads back is the same.
      assert.deepEqual(JSON.parse(JSON.stringify(inMessages)), inMessages);
      for (const output of inMessages) assert.ok(isPlainJson(output), JSON.stringify(output));
      assert.deepEqual(
        resultsOf(prompts(model, mode)[1]!).map((r) => r.output),
        expected,
      );
    });

    test(`${mode}: an output with no plain JSON form (a BigInt, a cycle) goes out as the providers send it, and the messages hold that`, async () => {
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic['self'] = cyclic;
      const big = tool({ inputSchema: z.object({}), execute: async () => ({ id: 12345678901234567890n }) });
      const loop = tool({ inputSchema: z.object({}), execute: async () => cyclic });
      const model = mockModel([
        {
          toolCalls: [
            { name: 'big', input: {}, id: 'b' },
            { name: 'loop', input: {}, id: 'l' },
          ],
        },
        { text: 'done' },
      ]);
      const { text, response } = await runMode(
        ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ big, loop }).build().prompt('go'),
        mode,
      );
      assert.equal(text, 'done');
      const expected = [
        { type: 'json', value: { id: '12345678901234567890' } },
        { type: 'json', value: { a: 1, self: '[Circular]' } },
      ];
      assert.deepEqual(
        resultsOf(response.messages).map((r) => r.output),
        expected,
      );
      assert.deepEqual(
        resultsOf(prompts(model, mode)[1]!).map((r) => r.output),
        expected,
      );
    });
  }

  test('a return-direct tool whose output has no JSON form ends the loop with its text, without throwing', async () => {
    const big = Object.assign(tool({ inputSchema: z.object({}), execute: async () => 12345678901234567890n }), { returnDirect: true });
    const model = mockModel([{ toolCalls: [{ name: 'big', input: {}, id: 'b' }] }]);
    const text = await ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ big }).build().prompt('go').call().content();
    assert.equal(text, '12345678901234567890');
  });
});

/** Plain JSON: null, booleans, finite numbers, strings, arrays and plain objects of them. */
function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(isPlainJson);
}

describe("a tool's onInputAvailable", () => {
  for (const mode of MODES) {
    test(`${mode}: is called once per valid call with its parsed input, before approval and execution, also for a client-side tool`, async () => {
      const order: string[] = [];
      const heard: Array<{ input: unknown; toolCallId: string; messages: number; abortSignal: unknown; context: unknown }> = [];
      const hear = (options: { input: unknown; toolCallId: string; messages: readonly ModelMessage[]; abortSignal?: AbortSignal; context?: unknown }) => {
        order.push(`input ${options.toolCallId}`);
        heard.push({
          input: options.input,
          toolCallId: options.toolCallId,
          messages: options.messages.length,
          abortSignal: options.abortSignal,
          context: (options.context as { conversationId?: string } | undefined)?.conversationId,
        });
      };
      const refund = tool({
        inputSchema: z.object({ amount: z.number(), currency: z.string().default('EUR') }),
        onInputAvailable: hear,
        needsApproval: async (_input, { toolCallId }) => {
          order.push(`approval ${toolCallId}`);
          return false;
        },
        execute: async (_input, { toolCallId }) => {
          order.push(`execute ${toolCallId}`);
          return 'ok';
        },
      });
      const ask = tool({ inputSchema: z.object({ question: z.string() }), onInputAvailable: hear });
      const model = mockModel([
        {
          toolCalls: [
            { name: 'refund', input: { amount: 'lots' }, id: 'bad' },
            { name: 'refund', input: { amount: 5 }, id: 'r1' },
            { name: 'ask', input: { question: 'sure?' }, id: 'q1' },
          ],
        },
      ]);
      const controller = new AbortController();
      const client = ChatClient.builder(model)
        .defaultAdvisors(new ToolCallingAdvisor())
        .defaultTools({ refund, ask })
        .defaultAdvisorParams({ [CONVERSATION_ID]: 'c-input' })
        .build();
      const { response } = await runMode(client.prompt('go').abortSignal(controller.signal), mode);
      assert.deepEqual(heard, [
        { input: { amount: 5, currency: 'EUR' }, toolCallId: 'r1', messages: 1, abortSignal: controller.signal, context: 'c-input' },
        { input: { question: 'sure?' }, toolCallId: 'q1', messages: 1, abortSignal: controller.signal, context: 'c-input' },
      ]);
      assert.deepEqual(order, ['input r1', 'approval r1', 'input q1', 'execute r1']);
      assert.deepEqual(
        response.toolCalls.map((c) => c.toolCallId),
        ['q1'],
      );
    });
  }

  test('is not called again when an approved call resumes', async () => {
    const heard: string[] = [];
    const refund = tool({
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: true,
      onInputAvailable: ({ toolCallId }) => {
        heard.push(toolCallId);
      },
      execute: async () => 'ok',
    });
    const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 5 }, id: 'r1' }] }, { text: 'done' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ refund }).build();
    const first = await client.prompt('go').call().chatResponse();
    const answer = toolApprovalResponse([{ approvalId: first.pendingApprovals![0]!.approvalId, approved: true }]);
    assert.equal(
      await client
        .prompt()
        .messages({ role: 'user', content: 'go' }, ...first.messages, answer)
        .call()
        .content(),
      'done',
    );
    assert.deepEqual(heard, ['r1']);
  });
});

describe('an approved tool runs', () => {
  for (const mode of MODES) {
    test(`${mode}: with the messages that hold the approval answer, as the AI SDK's does`, async () => {
      let got: readonly ModelMessage[] = [];
      const refund = tool({
        inputSchema: z.object({ amount: z.number() }),
        needsApproval: true,
        execute: async (_input, { messages }) => {
          got = messages;
          return 'ok';
        },
      });
      const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 5 }, id: 'r1' }] }, { text: 'done' }]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ refund }).build();
      const first = (await runMode(client.prompt('go'), mode)).response;
      const answer = toolApprovalResponse([{ approvalId: first.pendingApprovals![0]!.approvalId, approved: true }]);
      await runMode(client.prompt().messages({ role: 'user', content: 'go' }, ...first.messages, answer), mode);
      assert.deepEqual(
        got.map((m) => m.role),
        ['user', 'assistant', 'tool'],
      );
      assert.deepEqual(got.at(-1), answer);
      const parts = (got.at(-1)!.content as ToolResultPart[]).map((p) => p.type as string);
      assert.deepEqual(parts, ['tool-approval-response']);
    });
  }
});

describe('a streaming tool (async *execute)', () => {
  /** A tool that yields three progress values; the second waits for `release`. */
  function progressTool(release: Promise<void>) {
    return tool({
      inputSchema: z.object({ q: z.string() }),
      async *execute({ q }) {
        yield { status: 'searching', q };
        await release;
        yield { status: 'found', count: 2 };
        yield { status: 'done', hits: ['a', 'b'] };
      },
    });
  }
  const turns = [{ toolCalls: [{ name: 'search', input: { q: 'x' }, id: 's1' }] }, { text: 'Two hits.' }];

  test("stream(): each value is a preliminary tool-result event as it comes, then the result, as streamText's fullStream has them", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Without a value streamed while the tool runs, the tool goes on after a while, and the test fails below.
    let timedOut = false;
    setTimeout(() => {
      timedOut = true;
      release();
    }, 2000).unref();
    const client = ChatClient.builder(mockModel(turns))
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ search: progressTool(released) })
      .build();
    const ours: unknown[] = [];
    for await (const event of client.prompt('find x').stream().chatResponse()) {
      if (event.type !== 'tool-result') continue;
      ours.push({ output: event.output, preliminary: event.preliminary === true });
      // Seen while the tool still waits: the value streamed as it came, not once the tool ended.
      if (ours.length === 1) release();
    }
    assert.equal(timedOut, false, 'the first value arrived while the tool still waited');
    const sdk = streamText({ model: mockModel(turns), prompt: 'find x', tools: { search: progressTool(Promise.resolve()) }, stopWhen: stepCountIs(5) });
    const theirs: unknown[] = [];
    for await (const part of sdk.fullStream) {
      if (part.type === 'tool-result') theirs.push({ output: part.output, preliminary: part.preliminary === true });
    }
    assert.deepEqual(ours, theirs);
    assert.deepEqual(ours.at(-1), { output: { status: 'done', hits: ['a', 'b'] }, preliminary: false });
  });

  test('call(): the last value is the result, and the model gets it once', async () => {
    const model = mockModel(turns);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ search: progressTool(Promise.resolve()) })
      .build();
    const response = await client.prompt('find x').call().chatResponse();
    assert.equal(response.text, 'Two hits.');
    assert.deepEqual(resultsOf(response.messages), [{ id: 's1', output: { type: 'json', value: { status: 'done', hits: ['a', 'b'] } } }]);
  });
});
