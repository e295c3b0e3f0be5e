/**
 * `stream().toUIMessageStream()` and its response forms, read by what reads
 * them in an app: the AI SDK's own chat (`AbstractChat`, the core of
 * `useChat`, with `DefaultChatTransport`) over real HTTP, and its
 * `readUIMessageStream`, side by side with `streamText` on the same model
 * turns and tools.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import type { LanguageModelV4, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import {
  AbstractChat,
  convertToModelMessages,
  DefaultChatTransport,
  dynamicTool,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  readUIMessageStream,
  stepCountIs,
  streamText,
  tool,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type ModelMessage,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  type Advisor,
  AgentBreaker,
  AgentBreakerError,
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  InvalidOptionError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolCallingAdvisor,
  type StreamResponseSpec,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { promptLines } from '../memory/test-support/prompt-lines.ts';

/** The chat state `useChat` keeps in React, kept in plain fields. */
class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** `useChat` without React: the AI SDK's chat with its HTTP transport. */
class Chat extends AbstractChat<UIMessage> {
  constructor(url: string, init: Omit<ChatInit<UIMessage>, 'transport'> = {}) {
    super({ ...init, state: new PlainState(), transport: new DefaultChatTransport({ api: url }) });
  }
}

/** A chat route: the body useChat sends, turned into a ChatClient request, answered with `pipeUIMessageStreamToResponse`. */
type Route = (messages: UIMessage[], response: ServerResponse, request: IncomingMessage) => Promise<void>;

async function serve(route: Route): Promise<{ url: string } & AsyncDisposable> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const { messages } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: UIMessage[] };
    try {
      await route(messages, response, request);
    } catch (error) {
      response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/chat`,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The README's chat route: the chat's messages converted for `client` (in conversation `id`, if given), the answer piped as the UI message stream. */
function route(client: ChatClient, id?: string): Route {
  return async (messages, response) => {
    const request = client.prompt().messages(...(await convertToModelMessages(messages)));
    if (id !== undefined) request.advisors((a) => a.param(CONVERSATION_ID, id));
    await request.stream().pipeUIMessageStreamToResponse(response, { originalMessages: messages });
  };
}

/**
 * The parts of a UI message, without what differs by design between two runs
 * of the same turns: generated approval and block ids, and a failed call's text (each
 * shows the text its model read: the tool loop's says which tool failed).
 */
function partsOf(message: UIMessage | undefined): unknown[] {
  assert.ok(message !== undefined, 'an assistant message');
  return message.parts.map((part) => {
    const plain: Record<string, unknown> = { ...part };
    if ('id' in part) plain['id'] = 'block';
    if ('approval' in part && part.approval !== undefined) plain['approval'] = { ...part.approval, id: 'approval' };
    if ('errorText' in part && typeof part.errorText === 'string') plain['errorText'] = part.errorText.includes('backend down');
    return plain;
  });
}

/** A part as `type(state)`, or its type when it has no state. */
function shapeOf(message: UIMessage | undefined): string[] {
  return (message?.parts ?? []).map((p) => p.type + ('state' in p ? `(${p.state})` : ''));
}

/** The last part's text, when it is a text part. */
function lastText(message: UIMessage | undefined): string | undefined {
  const part = message?.parts.at(-1);
  return part?.type === 'text' ? part.text : undefined;
}

/** The last UI message a stream of chunks builds, read with the AI SDK's own reader. */
async function lastMessage(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage | undefined> {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return last;
}

/** The prompts a mock model was streamed, one line per message. */
function prompts(model: MockLanguageModelV4): string[][] {
  return model.doStreamCalls.map((call) => promptLines(call.prompt));
}

const lookup = (runs: string[] = []) =>
  tool({
    description: 'look an order up',
    inputSchema: z.object({ id: z.number() }),
    execute: async ({ id }) => {
      runs.push(`lookup ${id}`);
      return { id, price: '10 EUR' };
    },
  });

describe('stream().toUIMessageStream(): the UI message streamText sends for the same turns', () => {
  const CASES: ReadonlyArray<{ name: string; turns: MockTurn[]; tools: () => ToolSet }> = [
    { name: 'a plain answer', turns: [{ text: 'Hello there.' }], tools: () => ({}) },
    {
      name: 'a tool round, then the answer',
      turns: [{ text: 'Let me look.', toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'c1' }] }, { text: 'Order 7 is 10 EUR.' }],
      tools: () => ({ lookup: lookup() }),
    },
    {
      name: 'two parallel calls, one failing, over two tool rounds',
      turns: [
        {
          toolCalls: [
            { name: 'lookup', input: { id: 7 }, id: 'c1' },
            { name: 'fails', input: {}, id: 'c2' },
          ],
        },
        { text: 'One more.', toolCalls: [{ name: 'lookup', input: { id: 8 }, id: 'c3' }] },
        { text: 'Both cost 10 EUR.' },
      ],
      tools: () => ({
        lookup: lookup(),
        fails: tool({
          inputSchema: z.object({}),
          execute: async (): Promise<string> => {
            throw new Error('backend down');
          },
        }),
      }),
    },
    {
      name: 'a call that waits for approval',
      turns: [{ text: 'I will refund it.', toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }],
      tools: () => ({ refund: tool({ inputSchema: z.object({ amount: z.number() }), needsApproval: true, execute: async () => 'refunded' }) }),
    },
    {
      name: 'a streaming tool: its values as preliminary outputs, then its result',
      turns: [{ toolCalls: [{ name: 'search', input: { q: 'x' }, id: 's1' }] }, { text: 'Two hits.' }],
      tools: () => ({
        search: tool({
          inputSchema: z.object({ q: z.string() }),
          async *execute() {
            yield { status: 'searching' };
            yield { status: 'done', hits: 2 };
          },
        }),
      }),
    },
    {
      name: 'a dynamic tool (dynamicTool(), an MCP tool say)',
      turns: [{ toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'c1' }] }, { text: 'Found it.' }],
      tools: () => ({ lookup: dynamicTool({ inputSchema: z.object({ id: z.number() }), execute: async () => 'found' }) }),
    },
    {
      name: 'a client-side tool (no execute)',
      turns: [{ toolCalls: [{ name: 'askLocation', input: {}, id: 'l1' }] }],
      tools: () => ({ askLocation: tool({ inputSchema: z.object({}) }) }),
    },
  ];
  for (const { name, turns, tools } of CASES) {
    test(`${name}: the same parts, steps and states`, async () => {
      const ours = ChatClient.builder(mockModel(turns)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(tools()).build();
      const mine = await lastMessage(ours.prompt('hi').stream().toUIMessageStream());
      const sdk = streamText({ model: mockModel(turns), prompt: 'hi', tools: tools(), stopWhen: stepCountIs(10) });
      const theirs = await lastMessage(sdk.toUIMessageStream());
      assert.deepEqual(partsOf(mine), partsOf(theirs));
    });
  }
});

/**
 * A model that thinks (a signature on the thinking block's last delta, as
 * Anthropic sends it; an item id on the reasoning's start and encrypted
 * content on its end, as OpenAI's Responses API does), then answers or asks
 * for `refund`: the metadata a client must send back.
 */
function thinkingModel(): MockLanguageModelV4 {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } };
  let round = 0;
  return new MockLanguageModelV4({
    doStream: async () => {
      round += 1;
      const parts: LanguageModelV4StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-start', id: 'r', providerMetadata: { mock: { itemId: `rs-${round}` } } },
        { type: 'reasoning-delta', id: 'r', delta: 'Let me think.' },
        { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: { mock: { signature: `sig-${round}` } } },
        { type: 'reasoning-end', id: 'r', providerMetadata: { mock: { itemId: `rs-${round}`, encrypted: `enc-${round}` } } },
        { type: 'text-start', id: 't', providerMetadata: { mock: { itemId: `msg-${round}` } } },
        { type: 'text-delta', id: 't', delta: round === 1 ? 'I will refund it.' : 'Refunded.' },
        { type: 'text-end', id: 't' },
      ];
      if (round === 1) parts.push({ type: 'tool-call', toolCallId: 'r1', toolName: 'refund', input: '{"amount":10}' });
      parts.push({ type: 'finish', usage, finishReason: { unified: round === 1 ? 'tool-calls' : 'stop', raw: undefined } });
      return { stream: ReadableStream.from(parts) };
    },
  });
}

const refundTool = (runs: string[] = []) =>
  tool({
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      runs.push(`refund ${amount}`);
      return `refunded ${amount}`;
    },
  });

test("reasoning and text carry the provider metadata streamText's UI message has (a thinking block's signature, item ids)", async () => {
  const ours = ChatClient.builder(thinkingModel()).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ refund: refundTool() }).build();
  const mine = await lastMessage(ours.prompt('refund order 7').stream().toUIMessageStream());
  const sdk = streamText({ model: thinkingModel(), prompt: 'refund order 7', tools: { refund: refundTool() }, stopWhen: stepCountIs(5) });
  const theirs = await lastMessage(sdk.toUIMessageStream());
  assert.deepEqual(partsOf(mine), partsOf(theirs));
  const reasoning = mine?.parts.find((p) => p.type === 'reasoning');
  assert.deepEqual(reasoning?.providerMetadata, { mock: { itemId: 'rs-1', encrypted: 'enc-1' } }, 'the latest metadata of the block, as streamText keeps it');
});

describe('useChat over HTTP against a ChatClient route (pipeUIMessageStreamToResponse)', () => {
  test('three turns with a server-side tool and a memory: the steps convert back to what the memory stored, so each earlier message reaches the model once', async () => {
    const runs: string[] = [];
    const model = mockModel([
      { text: 'Hello.' },
      { text: 'Let me look.', toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'c1' }] },
      { text: 'Order 7 is 10 EUR.' },
      { text: 'You are welcome.' },
    ]);
    const memory = new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository() });
    const client = ChatClient.builder(model)
      .defaultTools({ lookup: lookup(runs) })
      .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .build();
    await using app = await serve(route(client, 'chat-1'));
    const chat = new Chat(app.url);

    await chat.sendMessage({ text: 'hi' });
    await chat.sendMessage({ text: 'What does order 7 cost?' });
    const stored = await memory.get('chat-1');
    await chat.sendMessage({ text: 'Thanks' });

    assert.equal(chat.status, 'ready');
    assert.deepEqual(runs, ['lookup 7']);
    const answer = chat.messages[3];
    assert.deepEqual(
      shapeOf(answer),
      ['step-start', 'text(done)', 'tool-lookup(output-available)', 'step-start', 'text(done)'],
      'one step per model round, as streamText sends them',
    );
    assert.equal(lastText(chat.messages.at(-1)), 'You are welcome.');
    assert.deepEqual(
      prompts(model).at(-1),
      [...promptLines(stored.map(toPromptMessage)), 'user: Thanks'],
      'the last request sends the stored conversation once, then the new turn',
    );
    assert.deepEqual(
      (await memory.get('chat-1')).map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant'],
      'each turn is stored once',
    );
  });

  test('an approval answered in the chat goes on in the same message: the tool runs once, the answer is a step of its own', async () => {
    const runs: string[] = [];
    const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
    const memory = new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository() });
    await using served = await refundChat(model, runs, { advisors: [new MessageChatMemoryAdvisor({ memory })], conversationId: 'chat-2' });
    const { chat } = served;

    await chat.sendMessage({ text: 'Refund order 7' });
    assert.deepEqual(runs, []);
    await answerRefund(chat, { approved: true });
    await waitFor(() => chat.status === 'ready' && lastText(chat.messages.at(-1)) !== undefined);

    assert.deepEqual(runs, ['refund 10']);
    assert.equal(chat.messages.length, 2, 'the answer goes on in the same assistant message');
    assert.deepEqual(shapeOf(chat.messages[1]), ['step-start', 'tool-refund(output-available)', 'step-start', 'text(done)']);
  });

  test('an approval denied in the chat closes the call as denied, as with streamText; the model gets the denial once', async () => {
    const runs: string[] = [];
    const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Not refunded.' }]);
    await using served = await refundChat(model, runs);
    const { chat } = served;

    await chat.sendMessage({ text: 'Refund order 7' });
    await answerRefund(chat, { approved: false, reason: 'too much' });
    await waitFor(() => chat.status === 'ready' && lastText(chat.messages.at(-1)) === 'Not refunded.');

    assert.deepEqual(runs, []);
    assert.deepEqual(shapeOf(chat.messages[1]), ['step-start', 'tool-refund(output-denied)', 'step-start', 'text(done)']);
    assert.equal(prompts(model)[1]?.filter((line) => line.startsWith('tool refund')).length, 1, 'one result for the call');
  });

  test('a call that fails before any output leaves no empty message in the chat, as with streamText', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw new Error('model down');
      },
    });
    const client = ChatClient.builder(model).defaultOptions({ maxRetries: 0 }).build();
    await using app = await serve(route(client));
    const chat = new Chat(app.url);
    await chat.sendMessage({ text: 'hi' });
    assert.equal(chat.status, 'error');
    assert.deepEqual(
      chat.messages.map((m) => m.role),
      ['user'],
    );
  });

  test('a client-side tool: the chat runs it (onToolCall, addToolOutput) and the answer follows in the same message', async () => {
    const model = mockModel([{ toolCalls: [{ name: 'askLocation', input: {}, id: 'l1' }] }, { text: 'It is sunny in Paris.' }]);
    const client = ChatClient.builder(model)
      .defaultTools({ askLocation: tool({ inputSchema: z.object({}) }) })
      .defaultAdvisors(new ToolCallingAdvisor())
      .build();
    await using app = await serve(route(client));
    const chat: Chat = new Chat(app.url, {
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        void chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output: 'Paris' });
      },
    });

    await chat.sendMessage({ text: 'Weather here?' });
    await waitFor(() => chat.status === 'ready' && lastText(chat.messages.at(-1)) !== undefined);

    assert.equal(chat.messages.length, 2);
    assert.deepEqual(prompts(model)[1]?.slice(-2), ['assistant: -> askLocation', 'tool askLocation: Paris'], 'the model got the client result');
    assert.deepEqual(shapeOf(chat.messages[1]), ['step-start', 'tool-askLocation(output-available)', 'step-start', 'text(done)']);
    assert.equal(lastText(chat.messages[1]), 'It is sunny in Paris.');
  });

  test("a breaker stop ends the stream with onError's text; without onError the client is told nothing of it, as the AI SDK does", async () => {
    const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'queued' });
    const spiral = (): MockTurn[] => Array.from({ length: 8 }, () => ({ toolCalls: [{ name: 'status', input: { job: 'build' } }] }));
    for (const onError of [undefined, (e: unknown) => (AgentBreakerError.isInstance(e) ? e.message : 'An error occurred.')]) {
      const client = ChatClient.builder(mockModel(spiral())).defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker()).defaultTools({ status }).build();
      await using app = await serve(async (messages, response) => {
        await client
          .prompt()
          .messages(...(await convertToModelMessages(messages)))
          .stream()
          .pipeUIMessageStreamToResponse(response, onError === undefined ? {} : { onError });
      });
      const errors: string[] = [];
      const chat = new Chat(app.url, { onError: (e) => errors.push(e.message) });
      await chat.sendMessage({ text: 'status?' });

      assert.equal(chat.status, 'error');
      if (onError === undefined) assert.deepEqual(errors, ['An error occurred.']);
      else assert.match(errors[0] ?? '', /^Agent stopped: tool-call spiral/);
      const calls = chat.messages.at(-1)?.parts.filter((p) => p.type === 'tool-status') ?? [];
      assert.ok(calls.length >= 3);
      assert.deepEqual(
        calls.filter((p) => 'state' in p && p.state !== 'output-available' && p.state !== 'output-error'),
        [],
        'no call is left open in the chat',
      );
      if (onError !== undefined) {
        // The stopped round's call, closed as failed: onError got what failed it, the stop (as streamText's stream hands it what failed a call).
        const last = calls.at(-1);
        assert.ok(last !== undefined && 'state' in last && last.state === 'output-error', 'the stopped round ends failed');
        assert.match('errorText' in last ? String(last.errorText) : '', /^Agent stopped: tool-call spiral/);
      }
    }
  });

  test("a returnDirect answer is its call's output, not text: the next turn converts back to what the memory stored", async () => {
    const model = mockModel([{ toolCalls: [{ name: 'quote', input: { id: 7 }, id: 'q1' }] }, { text: 'Anything else?' }]);
    const memory = new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository() });
    const quote = { ...tool({ inputSchema: z.object({ id: z.number() }), execute: async () => 'Order 7: 10 EUR' }), returnDirect: true };
    const client = ChatClient.builder(model)
      .defaultTools({ quote })
      .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .build();
    await using app = await serve(route(client, 'chat-3'));
    const chat = new Chat(app.url);

    await chat.sendMessage({ text: 'Quote order 7' });
    assert.deepEqual(shapeOf(chat.messages[1]), ['step-start', 'tool-quote(output-available)']);
    const stored = await memory.get('chat-3');
    await chat.sendMessage({ text: 'No' });
    assert.deepEqual(prompts(model).at(-1), [...promptLines(stored.map(toPromptMessage)), 'user: No']);
  });

  test('without a memory, an approval sends the paused round back with its reasoning metadata, so a thinking model can go on', async () => {
    const runs: string[] = [];
    const model = thinkingModel();
    await using served = await refundChat(model, runs);
    const { chat } = served;

    await chat.sendMessage({ text: 'Refund order 7' });
    await answerRefund(chat, { approved: true });
    await waitFor(() => chat.status === 'ready' && lastText(chat.messages.at(-1)) === 'Refunded.');

    assert.deepEqual(runs, ['refund 10']);
    const paused = model.doStreamCalls[1]?.prompt.find((m) => m.role === 'assistant');
    const thought = paused?.content.find((p) => p.type === 'reasoning');
    assert.deepEqual(thought?.providerOptions, { mock: { itemId: 'rs-1', encrypted: 'enc-1' } }, 'the model gets its reasoning back with its metadata');
  });

  test('a client that goes away ends the model call', async () => {
    let cancelled!: () => void;
    const wasCancelled = new Promise<void>((resolve) => {
      cancelled = resolve;
    });
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'stream-start', warnings: [] });
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Once upon a time' });
          },
          cancel: () => cancelled(),
        }),
      }),
    });
    const client = ChatClient.builder(model).build();
    let served!: Promise<void>;
    await using app = await serve(async (messages, response) => {
      served = client
        .prompt()
        .messages(...(await convertToModelMessages(messages)))
        .stream()
        .pipeUIMessageStreamToResponse(response);
      await served;
    });
    const chat = new Chat(app.url);
    const sent = chat.sendMessage({ text: 'Tell me a story' });
    await waitFor(() => chat.messages.at(-1)?.parts.some((p) => p.type === 'text' && p.text === 'Once upon a time') === true);
    await chat.stop();
    await sent;
    await withTimeout(wasCancelled, 'the model stream is cancelled');
  });
});

describe('toUIMessageStreamResponse and the options', () => {
  test("a Response of server-sent events with the AI SDK's headers, and the status and headers given", async () => {
    const client = ChatClient.builder(mockModel([{ text: 'Hello.' }])).build();
    const response = client
      .prompt('hi')
      .stream()
      .toUIMessageStreamResponse({ status: 201, headers: { 'x-trace': 't-1' }, generateMessageId: () => 'm-1' });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(response.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
    assert.equal(response.headers.get('x-trace'), 't-1');
    const events = (await response.text())
      .split('\n\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice('data: '.length));
    assert.equal(events.at(-1), '[DONE]');
    assert.deepEqual(JSON.parse(events[0]!), { type: 'start', messageId: 'm-1' });
    assert.deepEqual(
      events.slice(1, -1).map((e) => (JSON.parse(e) as { type: string }).type),
      ['start-step', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish'],
    );
  });

  test('onEnd gets the answer as a UI message, to persist it, and the outcome completed', async () => {
    const client = ChatClient.builder(mockModel([{ text: 'Hello.' }])).build();
    const original: UIMessage[] = [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }];
    let ended: UIMessage[] | undefined;
    let outcome: string | undefined;
    const stream = client
      .prompt('hi')
      .stream()
      .toUIMessageStream({
        originalMessages: original,
        onEnd: (event) => {
          ended = event.messages;
          outcome = event.outcome.status;
        },
      });
    await lastMessage(stream);
    assert.equal(outcome, 'completed');
    assert.deepEqual(
      ended?.map((m) => [m.role, m.parts.filter((p) => p.type === 'text').map((p) => p.text)]),
      [
        ['user', ['hi']],
        ['assistant', ['Hello.']],
      ],
    );
  });

  test('sendStart and sendFinish false leave those chunks out (to merge into a stream of your own); sendReasoning false leaves reasoning out', async () => {
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: ReadableStream.from<LanguageModelV4StreamPart>([
          { type: 'stream-start', warnings: [] },
          { type: 'reasoning-start', id: 'r' },
          { type: 'reasoning-delta', id: 'r', delta: 'thinking' },
          { type: 'reasoning-end', id: 'r' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Hi.' },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } },
          },
        ]),
      }),
    });
    const client = ChatClient.builder(model).build();
    const chunks: string[] = [];
    for await (const chunk of client.prompt('hi').stream().toUIMessageStream({ sendStart: false, sendFinish: false, sendReasoning: false }))
      chunks.push(chunk.type);
    assert.deepEqual(chunks, ['start-step', 'text-start', 'text-delta', 'text-end', 'finish-step']);
  });

  test("a failed tool's text reaches the client as the model read it, or as onError makes it once onError is given (redactToolErrors), as in the AI SDK", async () => {
    const db = tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error('connect ECONNREFUSED postgres://app:hunter2@db:5432');
      },
    });
    const errorTextOf = async (options: Parameters<StreamResponseSpec['toUIMessageStream']>[0]): Promise<unknown> => {
      const model = mockModel([{ toolCalls: [{ name: 'db', input: {}, id: 'd1' }] }, { text: 'The database is down.' }]);
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ db }).build();
      const message = await lastMessage(client.prompt('count users').stream().toUIMessageStream(options));
      const part = message?.parts.find((p) => p.type === 'tool-db');
      return part !== undefined && 'errorText' in part ? part.errorText : undefined;
    };
    assert.match(String(await errorTextOf({})), /hunter2/, 'without onError: the text the model read');
    assert.equal(await errorTextOf({ onError: () => 'Something went wrong.' }), 'Something went wrong.');
    assert.match(String(await errorTextOf({ onError: () => 'Something went wrong.', redactToolErrors: false })), /hunter2/);
  });

  test("onError gets what a failed tool threw, as streamText's UI stream passes it, so a chat shows the same text", async () => {
    /** An error whose message is for the model and the logs; what the user may see is said apart. */
    class QuotaError extends Error {
      readonly userMessage = 'You have used up your searches for today.';
    }
    const tools = () => ({
      search: tool({
        inputSchema: z.object({ q: z.string() }),
        execute: async (): Promise<string> => {
          throw new QuotaError('quota exceeded for key sk-live-123');
        },
      }),
    });
    const turns = (): MockTurn[] => [{ toolCalls: [{ name: 'search', input: { q: 'flights' }, id: 's1' }] }, { text: 'I could not search.' }];
    const onErrors = {
      'the error class': (e: unknown) => (e instanceof QuotaError ? e.userMessage : 'Something went wrong.'),
      "the error's message": (e: unknown) => (e as Error).message,
    };
    for (const [reading, onError] of Object.entries(onErrors)) {
      const shown: Array<{ status: ChatStatus; errorText: unknown }> = [];
      for (const side of ['streamText', 'ChatClient'] as const) {
        await using app = await serve(async (messages, response) => {
          const prompt = await convertToModelMessages(messages);
          if (side === 'streamText') {
            streamText({ model: mockModel(turns()), messages: prompt, tools: tools(), stopWhen: stepCountIs(5) }).pipeUIMessageStreamToResponse(response, {
              onError,
            });
          } else {
            const client = ChatClient.builder(mockModel(turns())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(tools()).build();
            await client
              .prompt()
              .messages(...prompt)
              .stream()
              .pipeUIMessageStreamToResponse(response, { onError });
          }
        });
        const chat = new Chat(app.url);
        await chat.sendMessage({ text: 'find flights' });
        const part = chat.messages.at(-1)?.parts.find((p) => p.type === 'tool-search');
        shown.push({ status: chat.status, errorText: part !== undefined && 'errorText' in part ? part.errorText : undefined });
      }
      assert.deepEqual(shown[1], shown[0], `ChatClient as streamText, onError reading ${reading}`);
      assert.equal(shown[1]?.status, 'ready');
    }
  });

  test("a call of an unknown tool or with invalid arguments reaches onError as the AI SDK's own error, as streamText passes it", async () => {
    const tools = () => ({ search: tool({ inputSchema: z.object({ q: z.string() }), execute: async () => 'found' }) });
    const cases: Record<string, MockTurn> = {
      'an unknown tool': { toolCalls: [{ name: 'book', input: { q: 'x' }, id: 'c1' }] },
      'invalid arguments': { toolCalls: [{ name: 'search', input: { q: 7 }, id: 'c1' }] },
    };
    const onError = (e: unknown) => `${(e as Error).name}: ${String((e as { toolName?: unknown }).toolName)}`;
    for (const [what, turn] of Object.entries(cases)) {
      const errorTexts: unknown[] = [];
      for (const side of ['streamText', 'ChatClient'] as const) {
        const model = mockModel([turn, { text: 'Sorry.' }]);
        const stream =
          side === 'streamText'
            ? streamText({ model, prompt: 'go', tools: tools(), stopWhen: stepCountIs(5) }).toUIMessageStream({ onError })
            : ChatClient.builder(model)
                .defaultAdvisors(new ToolCallingAdvisor())
                .defaultTools(tools())
                .build()
                .prompt('go')
                .stream()
                .toUIMessageStream({ onError });
        const part = (await lastMessage(stream))?.parts.find((p) => 'toolCallId' in p && p.toolCallId === 'c1');
        errorTexts.push(part !== undefined && 'errorText' in part ? part.errorText : undefined);
      }
      assert.equal(errorTexts[1], errorTexts[0], what);
      assert.match(String(errorTexts[1]), /^AI_(NoSuchTool|InvalidToolInput)Error: (book|search)$/, what);
    }
  });

  test('an unknown option or a value of the wrong type is an InvalidOptionError naming it, before any model call', () => {
    const model = mockModel([{ text: 'Hello.' }]);
    const spec = (): StreamResponseSpec => ChatClient.builder(model).build().prompt('hi').stream();
    assert.throws(
      () => spec().toUIMessageStream({ sendStart: 'no' } as never),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'sendStart',
    );
    assert.throws(
      () => spec().toUIMessageStream({ onFinish: () => {} } as never),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'onFinish' && /onEnd/.test(e.message),
    );
    assert.throws(
      () => spec().toUIMessageStreamResponse({ status: 99 }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'status',
    );
    assert.throws(
      () => spec().pipeUIMessageStreamToResponse({} as ServerResponse),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'response',
    );
    assert.throws(
      () => spec().toUIMessageStreamResponse({ status: 204 }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'status' && /has a body/.test(e.message),
    );
    assert.throws(
      () => spec().toUIMessageStreamResponse({ headers: 5 as never }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'headers',
    );
    assert.equal(model.doStreamCalls.length, 0);
  });

  test('headers as an object, an array of pairs or a Headers', async () => {
    for (const headers of [{ 'x-a': '1' }, [['x-a', '1']] as [string, string][], new Headers({ 'x-a': '1' })]) {
      const response = ChatClient.builder(mockModel([{ text: 'Hello.' }]))
        .build()
        .prompt('hi')
        .stream()
        .toUIMessageStreamResponse({ headers });
      assert.equal(response.headers.get('x-a'), '1');
      await response.text();
    }
  });
});

/**
 * A chat served by a client with the refund tool (which records its runs in
 * `runs`), the tool loop and `advisors`, which sends the turn on by itself
 * once every approval is answered, as the AI SDK's approval example does.
 */
async function refundChat(
  model: LanguageModelV4,
  runs: string[],
  options: { advisors?: Advisor[]; conversationId?: string } = {},
): Promise<{ chat: Chat } & AsyncDisposable> {
  const client = ChatClient.builder(model)
    .defaultTools({ refund: refundTool(runs) })
    .defaultAdvisors(new ToolCallingAdvisor(), ...(options.advisors ?? []))
    .build();
  const app = await serve(route(client, options.conversationId));
  return {
    chat: new Chat(app.url, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses }),
    [Symbol.asyncDispose]: () => app[Symbol.asyncDispose](),
  };
}

/** Answers the refund call the chat's last message waits on, as a user does with the chat's approval buttons. */
async function answerRefund(chat: Chat, answer: { approved: boolean; reason?: string }): Promise<void> {
  const asked = chat.messages.at(-1)?.parts.find((p) => p.type === 'tool-refund');
  assert.ok(asked !== undefined && 'approval' in asked && asked.state === 'approval-requested' && asked.approval !== undefined, 'the call waits for approval');
  await chat.addToolApprovalResponse({ id: asked.approval.id, ...answer });
}

/** A stored message as the model gets it (string content as a text part). */
function toPromptMessage(message: ModelMessage): Parameters<typeof promptLines>[0][number] {
  if (message.role === 'system') return message;
  const content = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
  return { ...message, content } as Parameters<typeof promptLines>[0][number];
}

async function waitFor(condition: () => boolean, what = 'the chat to settle'): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(condition(), `waited 5 s for ${what}`);
}

async function withTimeout(promise: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`waited 5 s for ${what}`)), 5000);
    }),
  ]).finally(() => clearTimeout(timer));
}
