import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import { z } from 'zod';
import {
  AgentBreaker,
  ChatClient,
  CONVERSATION_ID,
  InMemoryChatMemoryRepository,
  InvalidToolApprovalError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  ToolCallAdvisor,
  ToolCallingAdvisor,
  toolApprovalResponse,
  UnansweredToolApprovalError,
} from '../index.ts';
import { orderTools } from '../test-support/order-tools.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';

describe('tool approval (needsApproval) under the ToolCallingAdvisor', () => {
  for (const mode of MODES) {
    test(`${mode}: a call that needs approval suspends the loop; approving resumes it without re-running earlier tools`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          {
            toolCalls: [
              { name: 'lookup', arguments: { id: 'A1' } },
              { name: 'refund', arguments: { id: 'A1', amount: 250 } },
            ],
          },
          { text: 'Refund done.' },
        ],
      }).start();
      const ran: string[] = [];
      const breaker = new AgentBreaker();
      const memory = new MessageWindowChatMemory({ repository: new InMemoryChatMemoryRepository() });
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), new ToolCallingAdvisor(), breaker)
        .defaultTools(orderTools(ran))
        .defaultAdvisorParams({ [CONVERSATION_ID]: `approve-${mode}` })
        .build();

      const first = await runMode(client.prompt('Refund order A1'), mode);
      assert.deepEqual(ran, ['lookup A1'], 'the call needing approval did not run; the other one did');
      assert.equal(server.requests.length, 1, 'the loop stopped: no second model round');
      const pending = first.response.pendingApprovals ?? [];
      assert.equal(pending.length, 1);
      assert.equal(pending[0]!.toolCall.toolName, 'refund');
      assert.deepEqual(pending[0]!.toolCall.input, { id: 'A1', amount: 250 });
      if (mode === 'stream') {
        assert.ok(first.events.some((e) => e.type === 'tool-approval-request' && e.approvalId === pending[0]!.approvalId));
      }

      const second = await runMode(client.prompt().messages(toolApprovalResponse([{ approvalId: pending[0]!.approvalId, approved: true }])), mode);
      assert.equal(second.text, 'Refund done.');
      assert.deepEqual(ran, ['lookup A1', 'refund A1 250'], 'the approved call ran once; the earlier tool did not run again');
      // The model received both results, each once, after its own calls.
      const sent = server.requests[1]!.body.messages;
      const toolMessages = sent.filter((m) => m.role === 'tool');
      assert.deepEqual(
        toolMessages.map((m) => m.content),
        ['order A1: shipped', 'refunded 250 on A1'],
      );
      // The breaker saw each executed call once; memory holds each call and result once.
      assert.equal((await breaker.snapshot(`approve-${mode}`)).counters.toolCalls, 2);
      const stored = await memory.get(`approve-${mode}`);
      const results = stored.flatMap((m: ModelMessage) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
      assert.equal(results.length, 2);
    });

    test(`${mode}: a denial with a reason reaches the model as an execution-denied result; the tool never runs`, async () => {
      await using server = await new ScriptedModelServer({
        script: [{ toolCalls: [{ name: 'refund', arguments: { id: 'B2', amount: 500 } }] }, { text: 'Understood, no refund.' }],
      }).start();
      const ran: string[] = [];
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).defaultTools(orderTools(ran)).build();
      const history: ModelMessage[] = [{ role: 'user', content: 'Refund B2' }];
      const first = await runMode(client.prompt().messages(...history), mode);
      const approvalId = first.response.pendingApprovals![0]!.approvalId;
      const second = await runMode(
        client.prompt().messages(...history, ...first.response.messages, toolApprovalResponse([{ approvalId, approved: false, reason: 'over the limit' }])),
        mode,
      );
      assert.equal(second.text, 'Understood, no refund.');
      assert.deepEqual(ran, []);
      const result = server.requests[1]!.body.messages.find((m) => m.role === 'tool');
      assert.match(String(result?.content), /over the limit/);
    });
  }

  test('a provider that numbers calls per turn (call_0 again): the answer is for the call its request was made for, which runs', async () => {
    await using server = await new ScriptedModelServer({
      script: [
        { toolCalls: [{ id: 'call_0', name: 'refund', arguments: { id: 'A1', amount: 250 } }] },
        { text: 'Refunded A1.' },
        { toolCalls: [{ id: 'call_0', name: 'refund', arguments: { id: 'B2', amount: 500 } }] },
        { text: 'Refunded B2.' },
      ],
    }).start();
    const ran: string[] = [];
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(orderTools(ran)).build();
    const transcript: ModelMessage[] = [{ role: 'user', content: 'Refund A1' }];
    const approveAndGoOn = async () => {
      const asked = await client
        .prompt()
        .messages(...transcript)
        .call()
        .chatResponse();
      transcript.push(...asked.messages);
      const answer = toolApprovalResponse(asked.pendingApprovals!.map((p) => ({ approvalId: p.approvalId, approved: true })));
      const done = await client
        .prompt()
        .messages(...transcript, answer)
        .call()
        .chatResponse();
      transcript.push(...done.messages);
      return done.text;
    };

    assert.equal(await approveAndGoOn(), 'Refunded A1.');
    transcript.push({ role: 'user', content: 'Refund B2' });
    assert.equal(await approveAndGoOn(), 'Refunded B2.');
    assert.deepEqual(ran, ['refund A1 250', 'refund B2 500']);
    const sent = server.requests[3]!.body.messages;
    assert.deepEqual(
      sent.filter((m) => m.role === 'tool').map((m) => m.content),
      ['refunded 250 on A1', 'refunded 500 on B2'],
    );
  });

  test('an answer to an approval that was never requested is a typed error', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'never' }] }).start();
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(orderTools([])).build();
    await assert.rejects(
      client
        .prompt()
        .messages({ role: 'user', content: 'hi' }, toolApprovalResponse([{ approvalId: 'nope', approved: true }]))
        .call()
        .content(),
      InvalidToolApprovalError,
    );
    assert.equal(server.requests.length, 0);
  });

  for (const mode of MODES) {
    test(`${mode}: an answer to some of a round's approvals is a typed error naming the others; nothing runs and the model is not called`, async () => {
      await using server = await new ScriptedModelServer({
        script: [
          {
            toolCalls: [
              { name: 'refund', arguments: { id: 'A1', amount: 250 } },
              { name: 'refund', arguments: { id: 'B2', amount: 300 } },
            ],
          },
          { text: 'Both refunded.' },
        ],
      }).start();
      const ran: string[] = [];
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools(orderTools(ran)).build();
      const paused = (await runMode(client.prompt('Refund A1 and B2'), mode)).response;
      const [first, second] = paused.pendingApprovals!;
      const conversation: ModelMessage[] = [{ role: 'user', content: 'Refund A1 and B2' }, ...paused.messages];

      const partly = toolApprovalResponse([{ approvalId: first!.approvalId, approved: true }]);
      await assert.rejects(runMode(client.prompt().messages(...conversation, partly), mode), (error: unknown) => {
        assert.ok(UnansweredToolApprovalError.isInstance(error));
        assert.deepEqual(error.approvalIds, [second!.approvalId]);
        return true;
      });
      assert.deepEqual(ran, []);
      assert.equal(server.requests.length, 1);

      // Answered whole (one approved, one denied), the round goes on.
      const whole = toolApprovalResponse([
        { approvalId: first!.approvalId, approved: true },
        { approvalId: second!.approvalId, approved: false, reason: 'too much' },
      ]);
      assert.equal((await runMode(client.prompt().messages(...conversation, whole), mode)).text, 'Both refunded.');
      assert.deepEqual(ran, ['refund A1 250']);
    });
  }

  test('ToolCallAdvisor is the deprecated alias of ToolCallingAdvisor', () => {
    assert.equal(ToolCallAdvisor, ToolCallingAdvisor);
    assert.ok(new ToolCallAdvisor() instanceof ToolCallingAdvisor);
  });
});

describe('returnDirect in stream().content()', () => {
  test('the return-direct tool output is the streamed text, as in call()', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'submit', arguments: { summary: 'all tests pass' } }] }],
      onExhausted: 'repeat-last',
    }).start();
    const submit = Object.assign(tool({ inputSchema: z.object({ summary: z.string() }), execute: async ({ summary }) => summary }), { returnDirect: true });
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ submit }).build();
    let streamed = '';
    for await (const delta of client.prompt('Finish').stream().content()) streamed += delta;
    assert.equal(streamed, 'all tests pass');
    assert.equal(await client.prompt('Finish').call().content(), 'all tests pass');
    assert.equal(server.requests.length, 2, 'one model round per request: the tool output was not sent back');
  });
});
