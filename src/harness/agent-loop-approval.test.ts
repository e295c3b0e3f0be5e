/**
 * AgentLoop with tools that need the caller's approval, and with listeners the
 * client registers, over real HTTP against the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import {
  AgentLoop,
  ChatClient,
  InvalidOptionError,
  InvalidToolApprovalError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  MODEL_CALL_LISTENERS,
  PromptChatMemoryAdvisor,
  TOOL_CALL_LISTENERS,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  type AgentLoopEvent,
  type ModelRetryEvent,
} from '../index.ts';
import { promptLines } from '../memory/test-support/prompt-lines.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { orderTools } from '../test-support/order-tools.ts';
import { submitTool } from './submit-tool.ts';
import { ScriptedModelServer, scriptedModel, type ChatCompletionMessage, type ScriptedTurn } from '../testing/index.ts';

function tools(ran: string[]) {
  return {
    ...orderTools(ran),
    submit: Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true }),
  };
}

async function setUp(script: ScriptedTurn[], ran: string[], advisor = new ToolCallingAdvisor()) {
  const server = await new ScriptedModelServer({ script }).start();
  const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(advisor).defaultTools(tools(ran)).build();
  return { server, client };
}

function toolMessages(sent: readonly ChatCompletionMessage[]): unknown[] {
  return sent.filter((m) => m.role === 'tool').map((m) => m.content);
}

/** Every tool call in the transcript has exactly one result after it. */
function assertWellFormed(messages: readonly ModelMessage[]): void {
  const calls = messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.filter((p) => p.type === 'tool-call') : []));
  const results = messages.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
  assert.deepEqual(results.map((r) => r.toolCallId).sort(), calls.map((c) => c.toolCallId).sort());
}

describe('AgentLoop: tool approval', () => {
  test('without a finish tool: the run ends awaiting approval, then resume runs the approved call once and completes', async () => {
    const ran: string[] = [];
    const { server, client } = await setUp(
      [
        {
          toolCalls: [
            { name: 'lookup', arguments: { id: 'A1' } },
            { name: 'refund', arguments: { id: 'A1', amount: 250 } },
          ],
        },
        { text: 'Refund done.' },
      ],
      ran,
    );
    await using _ = server;
    const events: AgentLoopEvent[] = [];
    const loop = new AgentLoop({ client, finishTool: null, conversationId: 'approval-1', onProgress: (e) => events.push(e) });

    const first = await loop.run('Refund order A1');
    assert.equal(first.status, 'awaiting_approval');
    assert.match(first.reason ?? '', /1 tool call\(s\) wait for approval \(refund\)/);
    assert.equal(server.requests.length, 1, 'no second model round while the call waits');
    assert.deepEqual(ran, ['lookup A1']);
    assert.equal(first.pendingApprovals.length, 1);
    assert.deepEqual(first.pendingApprovals[0]!.toolCall.input, { id: 'A1', amount: 250 });
    assert.equal(
      events.some((e) => e.type === 'continuation'),
      false,
    );
    const last = first.messages.findLast((m) => m.role === 'assistant');
    assert.ok(
      Array.isArray(last?.content) && last.content.some((p) => p.type === 'tool-approval-request' && p.approvalId === first.pendingApprovals[0]!.approvalId),
    );

    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);
    assert.equal(second.status, 'completed');
    assert.equal(second.output, 'Refund done.');
    assert.deepEqual(second.pendingApprovals, []);
    assert.deepEqual(ran, ['lookup A1', 'refund A1 250'], 'the approved call ran once; lookup did not run again');
    assert.equal(server.requests.length, 2);
    const sent = server.requests[1]!.body.messages;
    assert.deepEqual(toolMessages(sent), ['order A1: shipped', 'refunded 250 on A1']);
    assert.equal(sent.filter((m) => m.role === 'user').length, 1, 'only the task: no continuation message');
    assert.equal(second.conversationId, 'approval-1');
    assert.equal(second.invocations, 2);
    assert.equal(second.toolCalls, 2);
    assert.equal(second.turns, 2);
    assertWellFormed(second.messages);
  });

  test('with a finish tool: no continuation after the waiting call; a denial reaches the model with its reason', async () => {
    const ran: string[] = [];
    const { server, client } = await setUp(
      [{ toolCalls: [{ name: 'refund', arguments: { id: 'B2', amount: 500 } }] }, { toolCalls: [{ name: 'submit', arguments: { summary: 'no refund' } }] }],
      ran,
    );
    await using _ = server;
    const events: AgentLoopEvent['type'][] = [];
    const loop = new AgentLoop({ client, onProgress: (e) => events.push(e.type) });

    const first = await loop.run('Refund B2');
    assert.equal(first.status, 'awaiting_approval');
    assert.equal(server.requests.length, 1);
    assert.deepEqual(events, ['invocation-start', 'invocation-end', 'end']);

    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: false, reason: 'over the refund limit' }]);
    assert.equal(second.status, 'completed');
    assert.equal(second.output, 'no refund');
    assert.deepEqual(ran, []);
    const sent = server.requests[1]!.body.messages;
    assert.equal(toolMessages(sent).length, 1);
    assert.match(String(toolMessages(sent)[0]), /over the refund limit/);
    assert.equal(
      sent.some((m) => m.role === 'user' && /not called `submit`/.test(String(m.content))),
      false,
    );
    assertWellFormed(second.messages);
  });

  test('an approved finish tool completes the run without another model call', async () => {
    await using server = await new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'deployed' } }] }] }).start();
    const submit = Object.assign(
      tool({ inputSchema: z.object({ summary: z.string() }), needsApproval: true, execute: async ({ summary }: { summary: string }) => summary }),
      { returnDirect: true },
    );
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit }).build();
    const loop = new AgentLoop({ client });
    const first = await loop.run('Deploy');
    assert.equal(first.status, 'awaiting_approval');
    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);
    assert.equal(second.status, 'completed');
    assert.equal(second.output, 'deployed');
    assert.equal(server.requests.length, 1);
    assertWellFormed(second.messages);
  });

  test('limits span the resumed run: a resume at the invocation limit runs the approved call and keeps the transcript well-formed', async () => {
    const ran: string[] = [];
    const { server, client } = await setUp([{ toolCalls: [{ name: 'refund', arguments: { id: 'C3', amount: 900 } }] }, { text: 'never sent' }], ran);
    await using _ = server;
    const loop = new AgentLoop({ client, maxInvocations: 1 });
    const first = await loop.run('Refund C3');
    assert.equal(first.status, 'awaiting_approval');
    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);
    assert.equal(second.status, 'invocation_limit');
    assert.equal(server.requests.length, 1);
    assert.deepEqual(ran, ['refund C3 900']);
    assertWellFormed(second.messages);
  });

  test('resume refuses a result that is not waiting, an unknown approval and an unanswered one, without calling the model', async () => {
    const ran: string[] = [];
    const { server, client } = await setUp(
      [
        {
          toolCalls: [
            { name: 'refund', arguments: { id: 'D4', amount: 200 } },
            { name: 'refund', arguments: { id: 'D5', amount: 300 } },
          ],
        },
      ],
      ran,
    );
    await using _ = server;
    const loop = new AgentLoop({ client });
    const first = await loop.run('Refund D4 and D5');
    assert.equal(first.pendingApprovals.length, 2);
    const [a, b] = first.pendingApprovals.map((p) => p.approvalId);
    await assert.rejects(loop.resume({ ...first, status: 'completed' }, []), InvalidOptionError);
    await assert.rejects(loop.resume(first, [{ approvalId: 'approval-nope', approved: true }]), InvalidToolApprovalError);
    await assert.rejects(loop.resume(first, [{ approvalId: a!, approved: true }]), (e: unknown) => InvalidOptionError.isInstance(e) && e.message.includes(b!));
    assert.equal(server.requests.length, 1);
    assert.deepEqual(ran, []);
  });

  test('an approve(call, ctx) policy on the advisor decides without suspending the run', async () => {
    const ran: string[] = [];
    const advisor = new ToolCallingAdvisor({ approve: (call) => (call.toolName === 'lookup' ? { approved: false, reason: 'no lookups today' } : true) });
    const { server, client } = await setUp([{ toolCalls: [{ name: 'lookup', arguments: { id: 'E5' } }] }, { text: 'Could not look it up.' }], ran, advisor);
    await using _ = server;
    const result = await new AgentLoop({ client, finishTool: null }).run('Look up E5');
    assert.equal(result.status, 'completed');
    assert.deepEqual(result.pendingApprovals, []);
    assert.deepEqual(ran, []);
    assert.match(String(toolMessages(server.requests[1]!.body.messages)[0]), /denied by the approver: no lookups today/);
  });
});

describe('AgentLoop: resuming the same answers again, without a chat memory', () => {
  /** A loop whose run waits for the approval of a refund, and the model turns after it. */
  async function waitingRefund(after: ScriptedTurn[]) {
    const ran: string[] = [];
    const { server, client } = await setUp([{ toolCalls: [{ name: 'refund', arguments: { id: 'A1', amount: 250 } }] }, ...after], ran);
    const loop = new AgentLoop({ client, finishTool: null });
    const waiting = await loop.run('Refund order A1');
    return { ran, server, loop, waiting, approvalId: waiting.pendingApprovals[0]!.approvalId };
  }

  test('after the resumed run failed, resuming again goes on from the refund that ran, without running it again', async () => {
    const { ran, server, loop, waiting, approvalId } = await waitingRefund([{ error: { status: 400, message: 'upstream hiccup' } }, { text: 'Refund done.' }]);
    await using _ = server;
    const answers = [{ approvalId, approved: true }];
    const failed = await loop.resume(waiting, answers);
    assert.equal(failed.status, 'error');
    assert.deepEqual(ran, ['refund A1 250']);
    const retried = await loop.resume(waiting, answers);
    assert.equal(retried.status, 'completed');
    assert.equal(retried.output, 'Refund done.');
    assert.deepEqual(ran, ['refund A1 250'], 'the approved refund ran once');
    assert.deepEqual(toolMessages(server.requests.at(-1)!.body.messages), ['refunded 250 on A1'], 'the model reads its result once');
    assertWellFormed(retried.messages);
  });

  test('the same answers resumed twice at once: the second is a ToolApprovalConflictError, and the refund runs once', async () => {
    const { ran, server, loop, waiting, approvalId } = await waitingRefund([{ text: 'Refund done.', delayMs: 50 }]);
    await using _ = server;
    const answers = [{ approvalId, approved: true }];
    const [first, second] = await Promise.allSettled([loop.resume(waiting, answers), loop.resume(waiting, answers)]);
    assert.equal(first.status === 'fulfilled' && first.value.status, 'completed');
    assert.ok(second.status === 'rejected' && ToolApprovalConflictError.isInstance(second.reason), String(second.status === 'rejected' && second.reason));
    assert.deepEqual(ran, ['refund A1 250']);
  });

  test('an answer that contradicts the one that went on is refused', async () => {
    const { ran, server, loop, waiting, approvalId } = await waitingRefund([{ text: 'Refund done.' }]);
    await using _ = server;
    assert.equal((await loop.resume(waiting, [{ approvalId, approved: true }])).status, 'completed');
    await assert.rejects(
      loop.resume(waiting, [{ approvalId, approved: false }]),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'answers[0].approved' && /answered approved before/.test(e.message),
    );
    assert.deepEqual(ran, ['refund A1 250']);
  });

  test('one approval answered both ways in one resume is refused before anything runs', async () => {
    const { ran, server, loop, waiting, approvalId } = await waitingRefund([{ text: 'Refund done.' }]);
    await using _ = server;
    await assert.rejects(
      loop.resume(waiting, [
        { approvalId, approved: false },
        { approvalId, approved: true },
      ]),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'answers[1].approved' && /both approved and denied/.test(e.message),
    );
    assert.deepEqual(ran, []);
    assert.equal((await loop.resume(waiting, [{ approvalId, approved: true }])).status, 'completed');
    assert.deepEqual(ran, ['refund A1 250']);
  });
});

describe('AgentLoop: the finish tool called with a call that needs approval', () => {
  /** One answer calling `refund` (needs approval) and `submit`; the next answer is for a later run only. */
  function setUp(memory?: MessageWindowChatMemory) {
    const ran: string[] = [];
    const model = mockModel([
      {
        toolCalls: [
          { name: 'refund', input: { id: 'G7', amount: 250 } },
          { name: 'submit', input: { summary: 'refund of G7 requested' } },
        ],
      },
      { toolCalls: [{ name: 'submit', input: { summary: 'nothing else to do' } }] },
    ]);
    const advisors = memory === undefined ? [new ToolCallingAdvisor()] : [new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor()];
    const client = ChatClient.builder(model)
      .defaultAdvisors(...advisors)
      .defaultTools({ ...orderTools(ran), submit: submitTool() })
      .build();
    return { ran, client, model, modelCalls: () => model.doGenerateCalls.length };
  }

  for (const approved of [true, false]) {
    test(`${approved ? 'approved' : 'denied'}: resume completes with the submitted output, without another model call`, async () => {
      const { ran, client, modelCalls } = setUp();
      const events: AgentLoopEvent['type'][] = [];
      const loop = new AgentLoop({ client, onProgress: (e) => events.push(e.type) });
      const first = await loop.run('Refund G7');
      assert.equal(first.status, 'awaiting_approval');
      assert.equal(modelCalls(), 1);

      const answer = { approvalId: first.pendingApprovals[0]!.approvalId, approved, ...(approved ? {} : { reason: 'over the limit' }) };
      const second = await loop.resume(first, [answer]);
      assert.equal(second.status, 'completed');
      assert.equal(second.output, 'refund of G7 requested');
      assert.equal(modelCalls(), 1, 'no model call after the finish tool ran');
      assert.equal(second.invocations, 1);
      assert.equal(events.includes('continuation'), false);
      assert.deepEqual(ran, approved ? ['refund G7 250'] : []);
      assertWellFormed(second.messages);
      const refund = second.messages.flatMap((m) =>
        m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' && p.toolName === 'refund' ? [p] : [])) : [],
      );
      assert.deepEqual(
        refund.map((r) => r.output.type),
        [approved ? 'text' : 'execution-denied'],
      );
    });
  }

  test('with chat memory: the stored conversation is complete after resume, and a later run goes on from it', async () => {
    const memory = new MessageWindowChatMemory();
    const { ran, client, model, modelCalls } = setUp(memory);
    const loop = new AgentLoop({ client, conversationId: 'finish-with-approval' });
    const first = await loop.run('Refund G7');
    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);
    assert.equal(second.status, 'completed');
    assert.equal(second.output, 'refund of G7 requested');
    assert.equal(modelCalls(), 1);
    assert.deepEqual(ran, ['refund G7 250']);
    const stored = await memory.get('finish-with-approval');
    assertWellFormed(stored);
    assert.deepEqual(
      stored.flatMap((m) => (m.role === 'tool' ? m.content.flatMap((p) => (p.type === 'tool-result' ? [p.toolName] : [])) : [])),
      ['submit', 'refund'],
    );

    const later = await loop.run('Anything else?');
    assert.equal(later.status, 'completed');
    assert.equal(later.output, 'nothing else to do');
    assert.equal(modelCalls(), 2);
    assert.deepEqual(promptLines(model.doGenerateCalls[1]!.prompt), [
      'user: Refund G7',
      'assistant: -> refund | -> submit',
      'tool submit: refund of G7 requested | refund: refunded 250 on G7',
      'user: Anything else?',
    ]);
    assertWellFormed(await memory.get('finish-with-approval'));
  });

  test('with chat memory, finishTool null: a call that ran before the pause goes out once after resume', async () => {
    const ran: string[] = [];
    const model = mockModel([
      {
        toolCalls: [
          { name: 'lookup', input: { id: 'H8' } },
          { name: 'refund', input: { id: 'H8', amount: 250 } },
        ],
      },
      { text: 'Refunded H8.' },
    ]);
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(model)
      .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
      .defaultTools(orderTools(ran))
      .build();
    const loop = new AgentLoop({ client, finishTool: null, conversationId: 'ran-before-pause' });
    const first = await loop.run('Refund H8');
    const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);
    assert.equal(second.status, 'completed', second.reason);
    assert.equal(second.output, 'Refunded H8.');
    assert.deepEqual(ran, ['lookup H8', 'refund H8 250']);
    assert.deepEqual(promptLines(model.doGenerateCalls[1]!.prompt), [
      'user: Refund H8',
      'assistant: -> lookup | -> refund',
      'tool lookup: order H8: shipped | refund: refunded 250 on H8',
    ]);
    assertWellFormed(await memory.get('ran-before-pause'));
  });
});

describe('AgentLoop: resume with PromptChatMemoryAdvisor after a call ran before the pause', () => {
  const submit = (summary: string): MockTurn => ({ toolCalls: [{ name: 'submit', input: { summary } }] });
  const lookupAndRefund = [
    { name: 'lookup', input: { id: 'H8' } },
    { name: 'refund', input: { id: 'H8', amount: 250 } },
  ];
  const round = ['user: Refund H8', 'assistant: -> lookup | -> refund', 'tool lookup: order H8: shipped | refund: refunded 250 on H8'];
  const cases: ReadonlyArray<{
    readonly name: string;
    readonly finishTool: 'submit' | null;
    readonly script: readonly MockTurn[];
    /** The model's requests without their system prompt: the resumed one (when there is one) and the later run's. */
    readonly sent: readonly string[][];
  }> = [
    {
      name: 'finishTool null',
      finishTool: null,
      script: [{ toolCalls: lookupAndRefund }, { text: 'Refunded H8.' }, { text: 'Nothing else.' }],
      sent: [round, ['user: Anything else?']],
    },
    {
      name: 'finishTool submit',
      finishTool: 'submit',
      script: [{ toolCalls: lookupAndRefund }, submit('Refunded H8.'), submit('Nothing else.')],
      // The model has not answered the submit result: that round goes as messages.
      sent: [round, [...round, 'assistant: -> submit', 'tool submit: Refunded H8.', 'user: Anything else?']],
    },
    {
      name: 'finishTool submit, called in the round that paused',
      finishTool: 'submit',
      script: [{ toolCalls: [...lookupAndRefund, submit('Refunded H8.').toolCalls![0]!] }, submit('Nothing else.')],
      sent: [
        [
          'user: Refund H8',
          'assistant: -> lookup | -> refund | -> submit',
          'tool lookup: order H8: shipped | submit: Refunded H8. | refund: refunded 250 on H8',
          'user: Anything else?',
        ],
      ],
    },
  ];
  for (const { name, finishTool, script, sent } of cases) {
    test(`${name}: the round goes to the model with the call that ran and its result, once; the memory is complete`, async () => {
      const ran: string[] = [];
      const model = mockModel(script);
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(model)
        .defaultAdvisors(new PromptChatMemoryAdvisor({ memory }), new ToolCallingAdvisor())
        .defaultTools({ ...orderTools(ran), submit: submitTool() })
        .build();
      const loop = new AgentLoop({ client, finishTool, conversationId: 'prompt-memory' });
      const first = await loop.run('Refund H8');
      assert.equal(first.status, 'awaiting_approval');
      const second = await loop.resume(first, [{ approvalId: first.pendingApprovals[0]!.approvalId, approved: true }]);

      assert.equal(second.status, 'completed', second.reason);
      assert.equal(second.output, 'Refunded H8.');
      assert.deepEqual(ran, ['lookup H8', 'refund H8 250'], 'each tool ran once');
      assertWellFormed(second.messages);
      assertWellFormed(await memory.get('prompt-memory'));
      const later = await loop.run('Anything else?');
      assert.equal(later.status, 'completed', later.reason);
      assert.equal(later.output, 'Nothing else.');
      assertWellFormed(await memory.get('prompt-memory'));

      const requests = model.doGenerateCalls.slice(1).map((c) => promptLines(c.prompt));
      assert.deepEqual(
        requests.map((lines) => lines.filter((line) => !line.startsWith('system: '))),
        sent,
      );
      // What goes as messages is not in the system prompt's history as well; the rest is, once.
      for (const lines of requests) {
        const system = lines.find((line) => line.startsWith('system: ')) ?? '';
        const calls = lines.filter((line) => line.includes('-> lookup')).length;
        assert.equal(calls + (system.match(/assistant called lookup/g)?.length ?? 0), 1, lines.join('\n'));
        assert.equal(lines.filter((line) => line.includes('lookup: order H8')).length + (system.match(/lookup returned/g)?.length ?? 0), 1);
      }
    });
  }
});

describe('AgentLoop: listeners the client registers', () => {
  test("the client's MODEL_CALL_LISTENERS and TOOL_CALL_LISTENERS fire next to the run's own", async () => {
    await using server = await new ScriptedModelServer({
      script: [{ error: { status: 503, retryAfterMs: 1 } }, { toolCalls: [{ name: 'lookup', arguments: { id: 'F6' } }] }, { text: 'Shipped.' }],
    }).start();
    const retries: ModelRetryEvent[] = [];
    const toolEnds: string[] = [];
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools(tools([]))
      .defaultAdvisorParams({
        [MODEL_CALL_LISTENERS]: [{ onRetry: (e: ModelRetryEvent) => retries.push(e) }],
        [TOOL_CALL_LISTENERS]: [{ onToolCallEnd: (e: { toolName: string }) => toolEnds.push(e.toolName) }],
      })
      .build();
    const events: AgentLoopEvent[] = [];
    const result = await new AgentLoop({ client, finishTool: null, onProgress: (e) => events.push(e) }).run('Where is F6?');
    assert.equal(result.status, 'completed');
    assert.deepEqual(
      retries.map((e) => [e.attempt, e.statusCode]),
      [[1, 503]],
    );
    assert.equal(events.filter((e) => e.type === 'retry').length, 1, "the run's own retry listener fired too");
    assert.deepEqual(toolEnds, ['lookup']);
    assert.equal(result.toolCalls, 1, "the run's own tool listener fired too");
  });
});
