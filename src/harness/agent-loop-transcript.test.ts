/**
 * What an AgentLoop run sends and keeps: the breaker's last billed answer in
 * the transcript, each message sent once with a chat memory in the client, and
 * a finish tool that ran completing the run at a limit — over real HTTP
 * against the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage, type Tool } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  AgentBreakerError,
  AgentLoop,
  ChatClient,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  submitTool,
  ToolCallingAdvisor,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type ChatCompletionMessage, type ScriptedTurn } from '../testing/index.ts';

/** Every tool call in the transcript has exactly one result after it. */
function assertWellFormed(messages: readonly ModelMessage[]): void {
  const calls = messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((p) => p.type === 'tool-call') : []));
  const results = messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
  assert.deepEqual(results.map((r) => r.toolCallId).sort(), calls.map((c) => c.toolCallId).sort());
}

function assistantTexts(messages: readonly ModelMessage[]): Array<string | undefined> {
  return messages
    .filter((m) => m.role === 'assistant')
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.find((p) => p.type === 'text')?.text));
}

/** A request's messages as `role: content`, tool calls named. */
function shown(sent: readonly ChatCompletionMessage[]): string[] {
  return sent.map((m) => {
    const calls = (m as { tool_calls?: Array<{ function: { name: string } }> }).tool_calls;
    return `${m.role}: ${calls?.length ? calls.map((c) => `call ${c.function.name}`).join(', ') : String(m.content)}`;
  });
}

describe('AgentLoop: the breaker stops after a billed round', () => {
  test('the answer the breaker stops on is in the transcript, and its tool call gets an error result', async () => {
    await using server = await new ScriptedModelServer({
      script: (_request, i) => ({ text: `answer #${i + 1}`, toolCalls: [{ name: 'read', arguments: { path: 'a.txt' } }] }),
    }).start();
    const read = tool({ description: 'read a file', inputSchema: z.object({ path: z.string() }), execute: async () => 'same content' });
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
      .defaultTools({ read, submit: submitTool() })
      .build();
    const result = await new AgentLoop({ client, maxInvocations: 20 }).run('read a.txt');

    assert.equal(result.status, 'stuck');
    assert.ok(result.error instanceof AgentBreakerError);
    const served = server.requests.length;
    assert.equal(result.invocations, served);
    // Every answer the model gave (and was billed for) is in the transcript, the last one included.
    assert.deepEqual(
      assistantTexts(result.messages),
      Array.from({ length: served }, (_, i) => `answer #${i + 1}`),
    );
    assertWellFormed(result.messages);
    const last = result.messages.at(-1)!;
    assert.equal(last.role, 'tool');
    const part = Array.isArray(last.content) ? last.content[0] : undefined;
    assert.equal(part?.type, 'tool-result');
    const output = part?.type === 'tool-result' ? part.output : undefined;
    assert.equal(output?.type, 'error-text');
    assert.match(String(output?.type === 'error-text' ? output.value : ''), /^The call did not finish: Agent stopped: .*[^.]\.$/);
  });
});

describe('AgentLoop with a chat memory in the client', () => {
  test('each continuation turn sends every message once: the memory brings back what it stored', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'thinking...' }, { text: 'still thinking' }, { toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }],
    }).start();
    const memory = new MessageWindowChatMemory({ maxMessages: 100 });
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .defaultTools({ submit: submitTool() })
      .build();
    const result = await new AgentLoop({ client, maxInvocations: 5, conversationId: 'c1' }).run('Task X');

    assert.equal(result.status, 'completed');
    assert.equal(result.output, 'done');
    assert.equal(result.turns, 3);
    const requests = server.requests.map((r) => shown(r.body.messages));
    const note = (left: number) => `user: You have not called \`submit\` yet, so the task is not finished. ${left} of 5 model calls remain.`;
    assert.deepEqual(requests[0], ['user: Task X']);
    assert.equal(requests[1]?.length, 3);
    assert.deepEqual(requests[1]?.slice(0, 2), ['user: Task X', 'assistant: thinking...']);
    assert.ok(requests[1]?.[2]?.startsWith(note(4)), requests[1]?.[2]);
    assert.equal(requests[2]?.length, 5);
    assert.deepEqual(requests[2]?.slice(0, 4), requests[1]?.concat('assistant: still thinking'));
    assert.ok(requests[2]?.[4]?.startsWith(note(3)), requests[2]?.[4]);
    // The run's transcript and the memory hold the same conversation, once.
    const stored = await memory.get('c1');
    assert.deepEqual(
      stored.map((m) => m.role),
      result.messages.map((m) => m.role),
    );
    assertWellFormed(result.messages);
  });

  for (const Memory of [MessageChatMemoryAdvisor, PromptChatMemoryAdvisor]) {
    test(`resume with a ${Memory.name}: the run completes and no message goes out twice as a message`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          { toolCalls: [{ name: 'refund', arguments: { id: 'A1' } }] },
          { text: 'Refunded.' },
          { toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] },
        ],
      }).start();
      const refund = tool({ inputSchema: z.object({ id: z.string() }), needsApproval: true, execute: async ({ id }) => `refunded ${id}` });
      const memory = new MessageWindowChatMemory({ maxMessages: 100 });
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new ToolCallingAdvisor(), new Memory({ memory }))
        .defaultTools({ refund, submit: submitTool() })
        .build();
      const loop = new AgentLoop({ client, maxInvocations: 5, conversationId: 'c2' });
      const first = await loop.run('Refund A1');
      assert.equal(first.status, 'awaiting_approval');
      const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);

      assert.equal(second.status, 'completed', second.reason);
      assert.equal(second.output, 'done');
      const requests = server.requests.map((r) => shown(r.body.messages).filter((m) => !m.startsWith('system: ')));
      const transcript = ['user: Refund A1', 'assistant: call refund', 'tool: refunded A1'];
      const note = /^user: You have not called `submit` yet/;
      if (Memory === MessageChatMemoryAdvisor) {
        assert.deepEqual(requests[1], transcript);
        assert.deepEqual(requests[2]?.slice(0, -1), [...transcript, 'assistant: Refunded.']);
      } else {
        // The history goes into the system prompt as text: the resumed turn needs the call its answer refers to.
        assert.deepEqual(requests[1], transcript);
        assert.match(String(server.requests[2]?.body.messages[0]?.content), /refunded A1/);
        assert.equal(requests[2]?.length, 1);
      }
      assert.match(requests[2]?.at(-1) ?? '', note);
      assertWellFormed(second.messages);
    });
  }

  test('without a memory every turn still sends the whole transcript', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ text: 'thinking...' }, { toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }] }],
    }).start();
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit: submitTool() }).build();
    const result = await new AgentLoop({ client, maxInvocations: 5 }).run('Task Y');
    assert.equal(result.status, 'completed');
    const second = shown(server.requests[1]!.body.messages);
    assert.deepEqual(second.slice(0, 2), ['user: Task Y', 'assistant: thinking...']);
    assert.equal(second.length, 3);
  });
});

describe('AgentLoop: a finish tool that ran at the limit', () => {
  async function setUp(script: ScriptedTurn[], submit: Tool<{ summary: string }, string>) {
    const server = await new ScriptedModelServer({ script }).start();
    const read = tool({ description: 'r', inputSchema: z.object({}), execute: async () => 'x' });
    return { server, client: ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ read, submit }).build() };
  }

  test('an ordinary finish tool called on the last allowed model call completes the run with its output', async () => {
    let submitted = 0;
    const submit = tool({
      description: 'Call when done',
      inputSchema: z.object({ summary: z.string() }),
      execute: async () => {
        submitted += 1;
        return 'Submitted.';
      },
    });
    const { server, client } = await setUp(
      [{ toolCalls: [{ name: 'read', arguments: {} }] }, { toolCalls: [{ name: 'submit', arguments: { summary: 'all done' } }] }, { text: 'Done.' }],
      submit,
    );
    await using _ = server;
    const result = await new AgentLoop({ client, maxInvocations: 2, finishTool: 'submit' }).run('task');

    assert.equal(result.status, 'completed');
    assert.equal(result.reason, undefined);
    assert.equal(result.output, 'Submitted.');
    assert.equal(submitted, 1);
    assert.equal(result.invocations, 2);
    assert.equal(server.requests.length, 2);
    assert.deepEqual(
      result.messages.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant', 'tool'],
    );
    assertWellFormed(result.messages);
  });

  test('a finish tool that failed does not complete the run: the limit stands', async () => {
    const submit = tool({
      description: 'Call when done',
      inputSchema: z.object({ summary: z.string() }),
      execute: async (): Promise<string> => {
        throw new Error('the tests still fail');
      },
    });
    const { server, client } = await setUp(
      [{ toolCalls: [{ name: 'read', arguments: {} }] }, { toolCalls: [{ name: 'submit', arguments: { summary: 'all done' } }] }, { text: 'Done.' }],
      submit,
    );
    await using _ = server;
    const result = await new AgentLoop({ client, maxInvocations: 2 }).run('task');
    assert.equal(result.status, 'invocation_limit');
    assert.equal(server.requests.length, 2);
    assertWellFormed(result.messages);
  });
});
