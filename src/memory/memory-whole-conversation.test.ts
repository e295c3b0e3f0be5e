/**
 * A client that keeps the whole conversation and sends all of it every turn
 * (the AI SDK's `useChat`, or a client that appends `response.messages` and
 * the next user message), with either memory advisor: the model gets each
 * earlier message once, from the memory, and the memory stores each turn
 * once. The client's copies may differ from the stored messages in form
 * (string content or text parts, provider options on one side only, UI
 * messages converted with `convertToModelMessages`); a copy that says
 * something else is sent as it is. With a windowed memory the window decides
 * what the model sees, also of what the client sends.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertToModelMessages, readUIMessageStream, tool, type ModelMessage, type UIMessage, type UIMessageChunk } from 'ai';
import { z } from 'zod';
import { MockLanguageModelV4 } from 'ai/test';
import {
  ChatClient,
  defaultMemorySystemPrompt,
  historyText,
  MessageWindowChatMemory,
  TokenWindowChatMemory,
  ToolCallingAdvisor,
  toolApprovalResponse,
  type ChatMemory,
  type ChatMemoryRepository,
  type ChatResponse,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import { promptLines } from './test-support/prompt-lines.ts';
import {
  assertOneResultPerCall,
  inConversation,
  lookupTool,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  refundTool,
  REPOSITORIES,
  sentPrompts,
} from './test-support/paused-round.ts';

const ADVISORS = Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[];
const user = (content: string): ModelMessage => ({ role: 'user', content });

/** The system prompt `PromptChatMemoryAdvisor` sends for `history` with no instructions of the request's own. */
const memoryPrompt = (history: readonly ModelMessage[]): string => `system: ${defaultMemorySystemPrompt(undefined, historyText(history))}`;

/**
 * What the model must get for a turn whose history is `history` and whose
 * new messages are `turn` (prompt lines): each earlier message once, as
 * messages or as the memory's text.
 */
function expectedPrompt(advisor: MemoryAdvisorName, history: readonly ModelMessage[], turn: readonly string[]): string[] {
  if (history.length === 0) return [...turn];
  if (advisor === 'PromptChatMemoryAdvisor') return [memoryPrompt(history), ...turn];
  return [...promptLines(asPrompt(history)), ...turn];
}

/** Messages as the model gets them, for prompt lines: text parts for a string, approval requests and answers left out (the AI SDK does). */
function asPrompt(messages: readonly ModelMessage[]): Parameters<typeof promptLines>[0] {
  const prompt: unknown[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      prompt.push(message);
      continue;
    }
    const parts = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const content = parts.filter((part) => part.type !== 'tool-approval-request' && part.type !== 'tool-approval-response');
    if (content.length > 0) prompt.push({ ...message, content });
  }
  return prompt as Parameters<typeof promptLines>[0];
}

/** `model`, except that every text and tool call it answers with carries provider metadata (a thinking signature, say). */
function withProviderMetadata(model: MockLanguageModelV4): MockLanguageModelV4 {
  const providerMetadata = { mock: { signature: 'sig-1' } };
  return new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      const result = await model.doGenerate(options);
      return { ...result, content: result.content.map((part) => (part.type === 'text' || part.type === 'tool-call' ? { ...part, providerMetadata } : part)) };
    },
    doStream: async (options: LanguageModelV4CallOptions) => {
      const result = await model.doStream(options);
      const marked = result.stream.pipeThrough(
        new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            controller.enqueue(part.type === 'text-start' || part.type === 'text-end' || part.type === 'tool-call' ? { ...part, providerMetadata } : part);
          },
        }),
      );
      return { ...result, stream: marked };
    },
  });
}

/** The model's requests of the mode, as they reached it. */
const received = (model: MockLanguageModelV4, mode: Mode) => (mode === 'call' ? model.doGenerateCalls : model.doStreamCalls);

describe('a client that sends the whole conversation every turn (it appends response.messages and the next user message)', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of REPOSITORIES) {
        test(`${mode}, ${advisor}, ${store}: the model gets each earlier message once; the memory stores each turn once`, async () => {
          using opened = open();
          const memory = new MessageWindowChatMemory({ repository: opened.repository });
          const model = mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }, { text: 'Nothing much.' }]);
          const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();
          const conversation: ModelMessage[] = [];
          const turn = async (text: string): Promise<ChatResponse> => {
            conversation.push(user(text));
            const { response } = await runMode(inConversation(client.prompt().messages(...conversation)), mode);
            conversation.push(...response.messages);
            return response;
          };

          await turn('hi');
          await turn('how are you');
          const afterTwo = await memory.get('c1');
          await turn("what's new");

          const prompts = sentPrompts(model, mode);
          assert.deepEqual(prompts[1], expectedPrompt(advisor, conversation.slice(0, 2), ['user: how are you']));
          assert.deepEqual(prompts[2], expectedPrompt(advisor, afterTwo, ["user: what's new"]));
          assert.deepStrictEqual(await memory.get('c1'), conversation, 'each message stored once, as sent and answered');
        });
      }

      test(`${mode}, ${advisor}: copies in another form (text parts for a string, provider options on one side only) count as the same`, async () => {
        const memory = new MessageWindowChatMemory();
        const model = withProviderMetadata(mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }]));
        const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();

        const hello = (await runMode(inConversation(client.prompt().messages(user('hi'))), mode)).response;
        const stored = await memory.get('c1');
        const assistant = stored[1];
        assert.ok(assistant?.role === 'assistant' && typeof assistant.content !== 'string');
        assert.ok(
          assistant.content.some((part) => 'providerOptions' in part && part.providerOptions?.mock !== undefined),
          'the stored answer keeps its provider metadata',
        );

        // The client keeps the user message as text parts with options of its own, and the answer as plain text.
        const copies: ModelMessage[] = [
          { role: 'user', content: [{ type: 'text', text: 'hi', providerOptions: { client: { cache: true } } }] },
          { role: 'assistant', content: hello.text },
        ];
        await runMode(inConversation(client.prompt().messages(...copies, user('how are you'))), mode);

        assert.deepEqual(sentPrompts(model, mode)[1], expectedPrompt(advisor, stored, ['user: how are you']));
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant'],
        );
        if (advisor === 'MessageChatMemoryAdvisor') {
          const sentAnswer = received(model, mode)[1]!.prompt[1];
          assert.ok(sentAnswer?.role === 'assistant');
          assert.deepEqual(
            sentAnswer.content.map((part) => ('providerOptions' in part ? part.providerOptions : undefined)),
            [{ mock: { signature: 'sig-1' } }],
            'the stored answer, with its provider metadata, is the one sent',
          );
        }
      });

      test(`${mode}, ${advisor}: a tab one turn behind (another tab went on meanwhile) is still a copy: each earlier message reaches the model once`, async () => {
        const memory = new MessageWindowChatMemory();
        const model = mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }, { text: 'Nothing much.' }]);
        const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();
        const tab: ModelMessage[] = [user('hi')];
        tab.push(...(await runMode(inConversation(client.prompt().messages(...tab)), mode)).response.messages);
        // The other tab asks next; this one does not see it.
        await runMode(inConversation(client.prompt().messages(...tab, user('how are you'))), mode);
        const history = await memory.get('c1');
        await runMode(inConversation(client.prompt().messages(...tab, user("what's new"))), mode);

        assert.deepEqual(sentPrompts(model, mode)[2], expectedPrompt(advisor, history, ["user: what's new"]));
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
          'each turn stored once',
        );
      });

      test(`${mode}, ${advisor}: an earlier message the client changed is not a copy: the request is sent as it is (nothing dropped)`, async () => {
        const memory = new MessageWindowChatMemory();
        const model = mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }]);
        const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();

        const hello = (await runMode(inConversation(client.prompt().messages(user('hi'))), mode)).response;
        const stored = await memory.get('c1');
        const edited: ModelMessage[] = [user('hey there'), ...hello.messages, user('how are you')];
        await runMode(inConversation(client.prompt().messages(...edited)), mode);

        assert.deepEqual(sentPrompts(model, mode)[1], expectedPrompt(advisor, stored, ['user: hey there', 'assistant: Hello.', 'user: how are you']));
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant'],
          'the new turn is stored, the repeated messages are not',
        );
      });

      test(`${mode}, ${advisor}: the client's system message and the client's default messages stay`, async () => {
        const memory = new MessageWindowChatMemory();
        const model = mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }]);
        const preamble: ModelMessage[] = [user('example question'), { role: 'assistant', content: 'example answer' }];
        const client = ChatClient.builder(model)
          .defaultMessages(...preamble)
          .defaultAdvisors(MEMORY_ADVISORS[advisor](memory))
          .build();
        const rules: ModelMessage = { role: 'system', content: 'Answer in one line.' };

        const hello = (await runMode(inConversation(client.prompt().messages(rules, user('hi'))), mode)).response;
        const stored = await memory.get('c1');
        await runMode(inConversation(client.prompt().messages(rules, user('hi'), ...hello.messages, user('how are you'))), mode);

        const prompt = sentPrompts(model, mode)[1]!;
        const [instructions, ...messages] = expectedPrompt(advisor, stored, ['system: Answer in one line.', 'user: how are you']);
        const preambleLines = ['user: example question', 'assistant: example answer'];
        assert.deepEqual(
          prompt,
          advisor === 'PromptChatMemoryAdvisor' ? [instructions, ...preambleLines, ...messages] : [...preambleLines, instructions!, ...messages],
        );
        assert.deepEqual(
          (await memory.get('c1')).map((m) => m.role),
          ['user', 'assistant', 'user', 'assistant'],
        );
      });
    }
  }
});

describe('a client that sends the whole conversation to a windowed memory: the window decides what the model sees', () => {
  const memories: ReadonlyArray<readonly [string, (repository: ChatMemoryRepository) => ChatMemory]> = [
    ['MessageWindowChatMemory (maxMessages 4)', (repository) => new MessageWindowChatMemory({ repository, maxMessages: 4 })],
    // About 4 tokens a message: the last two or three.
    ['TokenWindowChatMemory (maxTokens 10)', (repository) => new TokenWindowChatMemory({ repository, maxTokens: 10 })],
  ];
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [name, windowed] of memories) {
        for (const [store, open] of REPOSITORIES) {
          test(`${mode}, ${advisor}, ${name}, ${store}: the client's older messages are left out with the copies; the store holds each once`, async () => {
            using opened = open();
            const memory = windowed(opened.repository);
            const model = mockModel([{ text: 'Hello.' }, { text: 'Fine, thanks.' }, { text: 'Nothing much.' }, { text: 'Bye.' }]);
            const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();
            const conversation: ModelMessage[] = [];
            let last: ModelMessage[] = [];
            for (const text of ['hi', 'how are you', "what's new", 'bye']) {
              last = await memory.get('c1');
              conversation.push(user(text));
              const { response } = await runMode(inConversation(client.prompt().messages(...conversation)), mode);
              conversation.push(...response.messages);
            }

            assert.ok(last.length > 0 && last.length < 6, `the window (${last.length} messages) holds part of the conversation`);
            assert.deepEqual(sentPrompts(model, mode).at(-1), expectedPrompt(advisor, last, ['user: bye']));
            assert.deepStrictEqual(await opened.repository.findByConversationId('c1'), conversation, 'the store holds each message once');
          });
        }
      }

      test(`${mode}, ${advisor}: the whole conversation again with an approval answer: only the window and the round reach the model`, async () => {
        const runs: string[] = [];
        const memory = new MessageWindowChatMemory({ maxMessages: 2 });
        const model = mockModel([{ text: 'Hello.' }, { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]);
        const client = ChatClient.builder(model)
          .defaultTools({ refund: refundTool(runs) })
          .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
          .build();

        const hello = (await runMode(inConversation(client.prompt('hi')), mode)).response;
        const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
        const answer = toolApprovalResponse(paused.pendingApprovals!.map((p) => ({ approvalId: p.approvalId, approved: true })));
        const conversation = [user('hi'), ...hello.messages, user('Refund order 7'), ...paused.messages, answer];
        assert.equal((await runMode(inConversation(client.prompt().messages(...conversation)), mode)).text, 'Refunded.');

        assert.deepEqual(runs, ['refund 10']);
        // The window (2 messages) holds the round's turn; the first turn, out of it, is not sent, nor as text.
        assert.deepEqual(sentPrompts(model, mode).at(-1), ['user: Refund order 7', 'assistant: -> refund', 'tool refund: refunded 10']);
      });
    }
  }
});

/**
 * An assistant UI message as `useChat` builds it from the server's stream
 * (the UI message chunks the AI SDK sends for `response.messages`), read with
 * the AI SDK's own `readUIMessageStream`; `continued` is the message a
 * resumed call goes on with (after an approval).
 */
async function uiAssistantMessage(id: string, response: ChatResponse, continued?: UIMessage): Promise<UIMessage> {
  const chunks: UIMessageChunk[] = [{ type: 'start', messageId: id }];
  let step = false;
  for (const message of response.messages) {
    if (message.role === 'assistant' && typeof message.content !== 'string') {
      if (step) chunks.push({ type: 'finish-step' });
      chunks.push({ type: 'start-step' });
      step = true;
      for (const [index, part] of message.content.entries()) {
        if (part.type === 'text') {
          const textId = `${id}-${chunks.length}-${index}`;
          chunks.push({ type: 'text-start', id: textId }, { type: 'text-delta', id: textId, delta: part.text }, { type: 'text-end', id: textId });
        } else if (part.type === 'tool-call') {
          chunks.push({ type: 'tool-input-available', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
        } else if (part.type === 'tool-approval-request') {
          chunks.push({ type: 'tool-approval-request', approvalId: part.approvalId, toolCallId: part.toolCallId });
        }
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        if (part.output.type === 'text') chunks.push({ type: 'tool-output-available', toolCallId: part.toolCallId, output: part.output.value });
        else if (part.output.type === 'execution-denied') chunks.push({ type: 'tool-output-denied', toolCallId: part.toolCallId });
      }
    }
  }
  if (step) chunks.push({ type: 'finish-step' });
  chunks.push({ type: 'finish' });
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let built: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true, ...(continued === undefined ? {} : { message: continued }) })) {
    built = message;
  }
  assert.ok(built !== undefined);
  return built;
}

/** `message` with its tool call that waits for an approval answered, as `useChat`'s `addToolApprovalResponse` leaves it. */
function answered(message: UIMessage, approved: boolean): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      'state' in part && part.state === 'approval-requested'
        ? { ...part, state: 'approval-responded', approval: { id: part.approval.id, approved, ...(approved ? {} : { reason: 'too much' }) } }
        : part,
    ),
  };
}

describe('a useChat client: UI messages converted with convertToModelMessages on the server, every turn', () => {
  const SCRIPT: readonly MockTurn[] = [
    { text: 'Hello.' },
    { toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
    { text: 'Order 7 is 10 EUR.' },
    { text: 'You are welcome.' },
  ];
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of REPOSITORIES) {
        test(`${mode}, ${advisor}, ${store}: three turns with a server-side tool; each earlier message reaches the model once, each turn is stored once`, async () => {
          using opened = open();
          const runs: string[] = [];
          const memory = new MessageWindowChatMemory({ repository: opened.repository });
          const model = withProviderMetadata(mockModel(SCRIPT));
          const client = ChatClient.builder(model)
            .defaultTools({ lookup: lookupTool(runs) })
            .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
            .build();
          const ui: UIMessage[] = [];
          let sent: ModelMessage[] = [];
          const turn = async (text: string): Promise<ChatResponse> => {
            ui.push({ id: `u${ui.length}`, role: 'user', parts: [{ type: 'text', text }] });
            sent = await convertToModelMessages(ui);
            const { response } = await runMode(inConversation(client.prompt().messages(...sent)), mode);
            ui.push(await uiAssistantMessage(`a${ui.length}`, response));
            return response;
          };

          assert.equal((await turn('hi')).text, 'Hello.');
          const afterOne = await memory.get('c1');
          assert.equal((await turn('What does order 7 cost?')).text, 'Order 7 is 10 EUR.');
          const afterTwo = await memory.get('c1');
          assert.equal((await turn('Thanks')).text, 'You are welcome.');

          assert.deepEqual(runs, ['lookup 7']);
          assert.deepEqual(sent.length, afterTwo.length + 1);
          assert.notDeepStrictEqual(sent.slice(0, afterTwo.length), afterTwo, "the client's copies differ in form from what the memory stored");
          const prompts = sentPrompts(model, mode);
          assert.equal(prompts.length, 4);
          assert.deepEqual(prompts[1], expectedPrompt(advisor, afterOne, ['user: What does order 7 cost?']));
          assert.deepEqual(prompts[3], expectedPrompt(advisor, afterTwo, ['user: Thanks']));
          assert.deepEqual(promptLines(asPrompt(afterTwo)), [
            'user: hi',
            'assistant: Hello.',
            'user: What does order 7 cost?',
            'assistant: -> lookup',
            'tool lookup: order 7: 10 EUR',
            'assistant: Order 7 is 10 EUR.',
          ]);
          const stored = await memory.get('c1');
          assert.deepStrictEqual(stored.slice(0, afterTwo.length), afterTwo, 'what was stored stays');
          assert.deepEqual(promptLines(asPrompt(stored.slice(afterTwo.length))), ['user: Thanks', 'assistant: You are welcome.'], 'the third turn once');
        });
      }
    }
  }
});

describe('a useChat client that answers an approval: the paused round and the turns before it reach the model once', () => {
  const DECISIONS = [
    { name: 'approved', approved: true, ran: ['refund 10'], result: 'tool refund: refunded 10', answer: 'Refunded.' },
    {
      name: 'denied',
      approved: false,
      ran: [],
      result: `tool refund: ${JSON.stringify({ type: 'execution-denied', reason: 'too much' })}`,
      answer: 'Not refunded.',
    },
  ] as const;
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of REPOSITORIES) {
        for (const decision of DECISIONS) {
          test(`${mode}, ${advisor}, ${store}, ${decision.name}: the call runs at most once; every later request sends each earlier message once`, async () => {
            using opened = open();
            const runs: string[] = [];
            const memory = new MessageWindowChatMemory({ repository: opened.repository });
            const model = withProviderMetadata(
              mockModel([
                { text: 'Hello.' },
                { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
                { text: decision.answer },
                { text: 'You are welcome.' },
              ]),
            );
            const client = ChatClient.builder(model)
              .defaultTools({ refund: refundTool(runs) })
              .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
              .build();
            const ui: UIMessage[] = [];
            const send = async (): Promise<ChatResponse> =>
              (await runMode(inConversation(client.prompt().messages(...(await convertToModelMessages(ui)))), mode)).response;
            const ask = async (text: string): Promise<ChatResponse> => {
              ui.push({ id: `u${ui.length}`, role: 'user', parts: [{ type: 'text', text }] });
              const response = await send();
              ui.push(await uiAssistantMessage(`a${ui.length}`, response));
              return response;
            };

            await ask('hi');
            const paused = await ask('Refund order 7');
            assert.equal(paused.pendingApprovals?.length, 1);
            ui[ui.length - 1] = answered(ui.at(-1)!, decision.approved);
            const resumed = await send();
            assert.equal(resumed.text, decision.answer);
            ui[ui.length - 1] = await uiAssistantMessage(ui.at(-1)!.id, resumed, ui.at(-1));
            const afterRefund = await memory.get('c1');
            assert.equal((await ask('Thanks')).text, 'You are welcome.');

            assert.deepEqual(runs, decision.ran);
            const prompts = sentPrompts(model, mode);
            assert.equal(prompts.length, 4);
            // PromptChatMemoryAdvisor sends the turns a request carries with the paused round as messages, not as text too.
            assert.deepEqual(prompts[2], ['user: hi', 'assistant: Hello.', 'user: Refund order 7', 'assistant: -> refund', decision.result]);
            assert.deepEqual(prompts[3], expectedPrompt(advisor, afterRefund, ['user: Thanks']));
            assert.deepEqual(
              afterRefund.filter((m) => m.role !== 'tool').map((m) => m.role),
              ['user', 'assistant', 'user', 'assistant', 'assistant'],
              'the round is stored once',
            );
            assertOneResultPerCall(afterRefund);
            assert.deepEqual(
              (await memory.get('c1')).slice(afterRefund.length).map((m) => m.role),
              ['user', 'assistant'],
            );
          });
        }
      }

      test(`${mode}, ${advisor}: a conversation that moved on from an approval (the memory closes the call, the client has no result) is still a copy`, async () => {
        const runs: string[] = [];
        const memory = new MessageWindowChatMemory();
        const model = mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'OK, no refund.' }, { text: 'Hello.' }]);
        const client = ChatClient.builder(model)
          .defaultTools({ refund: refundTool(runs) })
          .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
          .build();
        const conversation: ModelMessage[] = [];
        const turn = async (text: string): Promise<void> => {
          conversation.push(user(text));
          conversation.push(...(await runMode(inConversation(client.prompt().messages(...conversation)), mode)).response.messages);
        };

        await turn('Refund order 7');
        await turn('Actually, never mind.');
        const history = await memory.get('c1');
        assert.ok(
          history.some((m) => m.role === 'tool') && !conversation.some((m) => m.role === 'tool'),
          'the memory closed the call; the client has no result for it',
        );
        await turn('Hello?');

        assert.deepEqual(runs, []);
        assert.deepEqual(sentPrompts(model, mode)[2], expectedPrompt(advisor, history, ['user: Hello?']));
        assert.deepEqual(
          (await memory.get('c1')).slice(history.length).map((m) => m.role),
          ['user', 'assistant'],
        );
      });
    }
  }
});

/** `model`, except that the stream of its `request`-th request (from 1) breaks after its first text delta, as a connection lost mid-answer. */
function breakingMidAnswer(model: MockLanguageModelV4, request: number): MockLanguageModelV4 {
  let requests = 0;
  return new MockLanguageModelV4({
    doStream: async (options: LanguageModelV4CallOptions) => {
      const result = await model.doStream(options);
      if (++requests !== request) return result;
      let cut = false;
      const broken = result.stream.pipeThrough(
        new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
          transform(part, controller) {
            if (cut) return;
            controller.enqueue(part);
            if (part.type === 'text-delta') {
              cut = true;
              controller.enqueue({ type: 'error', error: new Error('connection reset') });
            }
          },
        }),
      );
      return { ...result, stream: broken };
    },
  });
}

describe('a useChat client that kept more than the memory stored: an answer cut off mid-way stays in the conversation once', () => {
  const CASES = [
    {
      name: 'cut off in the round after a tool ran (the memory stored the round)',
      script: [
        { text: 'Hello.' },
        { toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
        { text: 'Order 7 is 10 EUR.' },
        { text: 'Order 8 is 12 EUR.' },
        { text: 'You are welcome.' },
      ],
      breaks: 3,
      kept: ['user: What does order 7 cost?', 'assistant: -> lookup', 'tool lookup: order 7: 10 EUR', 'assistant: Order 7 i'],
    },
    {
      name: 'cut off after a round whose call ran no tool (the memory stored the round before it)',
      script: [
        { text: 'Hello.' },
        { toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
        { toolCalls: [{ name: 'convert', input: { amount: 10 }, id: 'c1' }] },
        { text: 'Order 7 is 10 EUR.' },
        { text: 'Order 8 is 12 EUR.' },
        { text: 'You are welcome.' },
      ],
      breaks: 4,
      kept: [
        'user: What does order 7 cost?',
        'assistant: -> lookup',
        'tool lookup: order 7: 10 EUR',
        'assistant: -> convert',
        'tool convert: Unknown tool "convert". Available tools: lookup.',
        'assistant: Order 7 i',
      ],
    },
    {
      name: "cut off in the conversation's first answer (the memory holds nothing)",
      greet: false,
      script: [{ text: 'Order 7 is 10 EUR.' }, { text: 'Order 8 is 12 EUR.' }, { text: 'You are welcome.' }],
      breaks: 1,
      kept: ['user: What does order 7 cost?', 'assistant: Order 7 i'],
    },
    {
      name: 'cut off before any tool ran (the memory stored nothing of the turn)',
      script: [{ text: 'Hello.' }, { text: 'Order 7 is 10 EUR.' }, { text: 'Order 8 is 12 EUR.' }, { text: 'You are welcome.' }],
      breaks: 2,
      kept: ['user: What does order 7 cost?', 'assistant: Order 7 i'],
    },
  ] as const;
  for (const advisor of ADVISORS) {
    for (const [store, open] of REPOSITORIES) {
      for (const { name, script, breaks, kept, ...options } of CASES) {
        const greet = !('greet' in options) || options.greet;
        test(`${advisor}, ${store}: ${name}`, async () => {
          using opened = open();
          const runs: string[] = [];
          const memory = new MessageWindowChatMemory({ repository: opened.repository, maxMessages: 100 });
          const model = breakingMidAnswer(mockModel(script), breaks);
          const client = ChatClient.builder(model)
            .defaultOptions({ maxRetries: 0 })
            .defaultTools({ lookup: lookupTool(runs) })
            .defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory))
            .build();
          const ui: UIMessage[] = [];
          const errors: string[] = [];
          // As useChat does: the UI message stream read into the assistant message, whatever it holds when the stream ends.
          const turn = async (text: string): Promise<void> => {
            ui.push({ id: `u${ui.length}`, role: 'user', parts: [{ type: 'text', text }] });
            const stream = inConversation(client.prompt().messages(...(await convertToModelMessages(ui))))
              .stream()
              .toUIMessageStream({ generateMessageId: () => `a${ui.length}` });
            let answer: UIMessage | undefined;
            for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (error) => errors.push(String(error)) })) answer = message;
            assert.ok(answer !== undefined);
            ui.push(answer);
          };

          if (greet) await turn('hi');
          await turn('What does order 7 cost?');
          assert.equal(errors.length, 1, 'the turn broke off');
          await turn('And order 8?');
          const afterThree = await memory.get('c1');
          await turn('Thanks');

          const before = [...(greet ? ['user: hi', 'assistant: Hello.'] : []), ...kept];
          const prompts = model.doStreamCalls.map((c) => c.prompt);
          const third = prompts.at(-2)!;
          assert.deepEqual(
            promptLines(asPrompt(afterThree)),
            [...before, 'user: And order 8?', 'assistant: Order 8 is 12 EUR.'],
            'what the client kept is stored once',
          );
          if (advisor === 'MessageChatMemoryAdvisor') {
            assert.deepEqual(promptLines(third), [...before, 'user: And order 8?']);
            assertOneResultPerCall(third as ModelMessage[]);
          } else {
            assert.deepEqual(promptLines(third), [memoryPrompt(afterThree.slice(0, -2)), 'user: And order 8?']);
          }
          assert.deepEqual(promptLines(prompts.at(-1)!), expectedPrompt(advisor, afterThree, ['user: Thanks']), 'and each message once from then on');
        });
      }
    }
  }
});

describe('a client that sends the whole conversation of a chat that repeats itself: its latest copy of the history is the one that counts', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      test(`${mode}, ${advisor}: nothing of the copy is taken for messages the client kept beyond the memory`, async () => {
        const memory = new MessageWindowChatMemory({ maxMessages: 2 });
        const model = mockModel([{ text: 'Hello.' }, { text: 'Hello.' }, { text: 'Bye.' }]);
        const client = ChatClient.builder(model).defaultAdvisors(MEMORY_ADVISORS[advisor](memory)).build();
        const conversation: ModelMessage[] = [];
        for (const text of ['hi', 'hi', 'bye']) {
          conversation.push(user(text));
          conversation.push(...(await runMode(inConversation(client.prompt().messages(...conversation)), mode)).response.messages);
        }

        assert.deepEqual(sentPrompts(model, mode).at(-1), expectedPrompt(advisor, conversation.slice(2, 4), ['user: bye']));
        assert.deepEqual(promptLines(asPrompt(await memory.get('c1'))), ['user: bye', 'assistant: Bye.']);
      });
    }
  }
});

describe('a useChat client and a round that waits for approvals: whatever the user does next, each message reaches the model once', () => {
  /** A refund tool that needs approval, counting its runs; its run waits until the call is aborted when `hang` is set. */
  function refund(runs: string[], hang?: () => void) {
    return tool({
      description: 'refund',
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: async ({ amount }, { abortSignal }) => {
        runs.push(`refund ${amount}`);
        if (hang === undefined) return `refunded ${amount}`;
        hang();
        return new Promise<string>((_, reject) => abortSignal?.addEventListener('abort', () => reject(new Error('stopped')), { once: true }));
      },
    });
  }

  /** A client with a memory advisor whose model plays `script`, and a useChat-like conversation of UI messages. */
  function chat(advisor: MemoryAdvisorName, script: readonly MockTurn[], tools: Record<string, ReturnType<typeof refund>>) {
    const memory = new MessageWindowChatMemory();
    const model = mockModel(script);
    const client = ChatClient.builder(model).defaultTools(tools).defaultAdvisors(new ToolCallingAdvisor(), MEMORY_ADVISORS[advisor](memory)).build();
    const ui: UIMessage[] = [];
    const send = async (mode: Mode, abortSignal?: AbortSignal): Promise<ChatResponse> => {
      const spec = inConversation(client.prompt().messages(...(await convertToModelMessages(ui))));
      return (await runMode(abortSignal === undefined ? spec : spec.abortSignal(abortSignal), mode)).response;
    };
    const ask = async (mode: Mode, text: string): Promise<ChatResponse> => {
      ui.push({ id: `u${ui.length}`, role: 'user', parts: [{ type: 'text', text }] });
      const response = await send(mode);
      ui.push(await uiAssistantMessage(`a${ui.length}`, response));
      return response;
    };
    return { memory, model, ui, send, ask };
  }

  /** Each message of the model's last request, by its prompt line, at most once; each call with exactly one result. */
  function assertEachOnce(model: MockLanguageModelV4, mode: Mode): void {
    const prompt = received(model, mode).at(-1)!.prompt;
    const lines = promptLines(prompt);
    assert.deepEqual(lines, [...new Set(lines)], 'no message twice');
    assertOneResultPerCall(prompt as ModelMessage[]);
  }

  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      test(`${mode}, ${advisor}: two calls that wait for approval in one round, both approved`, async () => {
        const runs: string[] = [];
        const { memory, model, ui, send, ask } = chat(
          advisor,
          [
            {
              toolCalls: [
                { name: 'refund', input: { amount: 7 }, id: 'r1' },
                { name: 'refund', input: { amount: 8 }, id: 'r2' },
              ],
            },
            { text: 'Both refunded.' },
            { text: 'You are welcome.' },
          ],
          { refund: refund(runs) },
        );

        assert.equal((await ask(mode, 'Refund orders 7 and 8')).pendingApprovals?.length, 2);
        ui[ui.length - 1] = answered(ui.at(-1)!, true);
        const resumed = await send(mode);
        ui[ui.length - 1] = await uiAssistantMessage(ui.at(-1)!.id, resumed, ui.at(-1));
        const afterRefund = await memory.get('c1');
        assert.equal((await ask(mode, 'Thanks')).text, 'You are welcome.');

        assert.deepEqual(runs, ['refund 7', 'refund 8']);
        assert.deepEqual(promptLines(received(model, mode).at(-1)!.prompt), expectedPrompt(advisor, afterRefund, ['user: Thanks']));
        assert.deepEqual(
          (await memory.get('c1')).slice(afterRefund.length).map((m) => m.role),
          ['user', 'assistant'],
          'the turn after the round is stored once',
        );
      });

      test(`${mode}, ${advisor}: the user writes instead of answering the approval (useChat leaves the waiting call out)`, async () => {
        const runs: string[] = [];
        const { memory, model, ask } = chat(
          advisor,
          [{ text: 'Hello.' }, { toolCalls: [{ name: 'refund', input: { amount: 7 }, id: 'r1' }] }, { text: 'OK, no refund.' }, { text: 'You are welcome.' }],
          { refund: refund(runs) },
        );

        await ask(mode, 'hi');
        await ask(mode, 'Refund order 7');
        await ask(mode, 'No wait, do not refund');
        const afterIgnored = await memory.get('c1');
        assert.equal((await ask(mode, 'Thanks')).text, 'You are welcome.');

        assert.deepEqual(runs, []);
        const users = afterIgnored.filter((m) => m.role === 'user');
        assert.equal(users.length, 3, 'each user message stored once');
        assertEachOnce(model, mode);
        assert.deepEqual(promptLines(received(model, mode).at(-1)!.prompt), expectedPrompt(advisor, afterIgnored, ['user: Thanks']));
      });

      test(`${mode}, ${advisor}: stopped while the approved call runs, the next message goes on (useChat sends the answer again)`, async () => {
        const runs: string[] = [];
        let running!: () => void;
        const started = new Promise<void>((resolve) => {
          running = resolve;
        });
        const { ui, model, send, ask } = chat(
          advisor,
          [{ toolCalls: [{ name: 'refund', input: { amount: 7 }, id: 'r1' }] }, { text: 'Something else, then.' }, { text: 'You are welcome.' }],
          { refund: refund(runs, () => running()) },
        );

        await ask(mode, 'Refund order 7');
        ui[ui.length - 1] = answered(ui.at(-1)!, true);
        const stop = new AbortController();
        const stopped = send(mode, stop.signal);
        await started;
        stop.abort();
        await assert.rejects(stopped);
        assert.equal((await ask(mode, 'Never mind, something else')).text, 'Something else, then.');
        assert.equal((await ask(mode, 'Thanks')).text, 'You are welcome.');

        assert.deepEqual(runs, ['refund 7'], 'the approved call ran once');
        assertEachOnce(model, mode);
      });
    }
  }
});
