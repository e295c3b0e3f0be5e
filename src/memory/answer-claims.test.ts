/**
 * The claims of a windowed memory, through its own methods: a claim wins all
 * of its answers or none, what it decides never changes with later writes,
 * and claimed results join the conversation when their claim ends. A
 * retry's claim of going on from the round the conversation ends with holds
 * until it ends, or until the conversation goes on from that round.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage, ToolApprovalResponse, ToolResultPart } from 'ai';
import { MessageWindowChatMemory } from '../index.ts';

const answer = (approvalId: string): ToolApprovalResponse => ({ type: 'tool-approval-response', approvalId, approved: true });
const result = (toolCallId: string, value: string): ToolResultPart => ({
  type: 'tool-result',
  toolCallId,
  toolName: 'lookup',
  output: { type: 'text', value },
});

/** A round of three calls waiting for approval, and one of two client-side calls under `call_0` and `call_1`. */
const approvalRound: ModelMessage = {
  role: 'assistant',
  content: ['a1', 'a2', 'a3'].flatMap((id) => [
    { type: 'tool-call' as const, toolCallId: `r-${id}`, toolName: 'refund', input: {} },
    { type: 'tool-approval-request' as const, approvalId: id, toolCallId: `r-${id}` },
  ]),
};
const clientRound: ModelMessage = {
  role: 'assistant',
  content: ['call_0', 'call_1'].map((id) => ({ type: 'tool-call' as const, toolCallId: id, toolName: 'lookup', input: {} })),
};

/** The tool parts of `messages`: results as `id=output`, approval answers by id. */
const toolParts = (messages: readonly ModelMessage[]): string[] =>
  messages
    .flatMap((m) => (m.role === 'tool' ? m.content : []))
    .map((p) => (p.type === 'tool-result' ? `${p.toolCallId}=${JSON.stringify(p.output)}` : p.approvalId));

describe('claims of a windowed memory', () => {
  test('a claim that loses one approval claims none; the others stay open, and what a claim decided never changes', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [{ role: 'user', content: 'Refund all' }, approvalRound]);

    assert.deepEqual(await memory.claimApprovals('c', [answer('a1'), answer('a2')]), []);
    assert.deepEqual(await memory.claimApprovals('c', [answer('a2'), answer('a3')]), ['a2'], 'only the one answered before is named');
    assert.deepEqual(toolParts(await memory.get('c')), ['a1', 'a2'], 'nothing of the losing claim is in the conversation');
    assert.deepEqual(await memory.claimApprovals('c', [answer('a3')]), [], 'a3 is still open');
    assert.deepEqual(await memory.claimApprovals('c', [answer('a3')]), ['a3']);
    assert.deepEqual(toolParts(await memory.get('c')), ['a1', 'a2', 'a3']);
  });

  test('claimed results are left out of the conversation until the claim ends; a second claim of them loses, before and after', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [{ role: 'user', content: 'Look them up' }, clientRound]);
    const before = await memory.get('c');

    const claim = await memory.claimToolResults('c', [result('call_0', 'A'), result('call_1', 'B')]);
    assert.deepEqual(claim.lost, []);
    assert.deepStrictEqual(await memory.get('c'), before, 'in flight: not part of the conversation yet');
    assert.deepEqual((await memory.claimToolResults('c', [result('call_1', 'B again')])).lost, ['call_1']);

    await claim.end([{ role: 'assistant', content: 'A and B.' }]);
    const after = await memory.get('c');
    assert.deepEqual(toolParts(after), ['call_0={"type":"text","value":"A"}', 'call_1={"type":"text","value":"B"}']);
    assert.deepEqual(
      after.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
      'the results where they were claimed, then the turn; no marks left',
    );
    assert.ok(after.every((m) => m.providerOptions === undefined));
    assert.deepEqual((await memory.claimToolResults('c', [result('call_0', 'A')])).lost, ['call_0']);
    assert.deepStrictEqual(await memory.get('c'), after);

    // A later turn that numbers its calls afresh: the same ids are new calls, with no result yet.
    await memory.add('c', [{ role: 'user', content: 'Again' }, clientRound]);
    const again = await memory.claimToolResults('c', [result('call_0', 'C'), result('call_1', 'D')]);
    assert.deepEqual(again.lost, []);
    await again.end([]);
    assert.deepEqual(toolParts(await memory.get('c')).slice(2), ['call_0={"type":"text","value":"C"}', 'call_1={"type":"text","value":"D"}']);
  });

  test("a retry's claim: one of two wins; ended, it lets the next retry win; a stale one loses; never ended, it holds until the conversation goes on", async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [{ role: 'user', content: 'Look them up' }, clientRound, { role: 'tool', content: [result('call_0', 'A'), result('call_1', 'B')] }]);
    const history = await memory.get('c');

    const first = await memory.claimRetry('c', history);
    assert.equal(first.lost, false);
    assert.equal((await memory.claimRetry('c', history)).lost, true, 'held by the first');
    assert.deepStrictEqual(await memory.get('c'), history, 'a claim is not part of the conversation');
    await first.end([]);
    const second = await memory.claimRetry('c', history);
    assert.equal(second.lost, false, 'the first failed and stored nothing: the next retry goes on');

    // The second went on: the model asked for the same calls again, and their results came.
    await second.end([clientRound, { role: 'tool', content: [result('call_0', 'C'), result('call_1', 'D')] }]);
    assert.equal((await memory.claimRetry('c', history)).lost, true, 'read before the second went on');
    const now = await memory.get('c');
    const dead = await memory.claimRetry('c', now);
    assert.equal(dead.lost, false);
    assert.equal((await memory.claimRetry('c', now)).lost, true, 'held by a request that never ends its claim');

    // The same round again, in a turn of its own.
    await memory.add('c', [{ role: 'user', content: 'Again' }, clientRound, { role: 'tool', content: [result('call_0', 'C'), result('call_1', 'D')] }]);
    assert.equal((await memory.claimRetry('c', await memory.get('c'))).lost, false, 'the conversation went on from the held round');
    assert.equal((await memory.claimRetry('c', [{ role: 'user', content: 'Look them up' }, clientRound])).lost, true, 'no answers to go on from');
  });

  test('what a claim writes is marked as ending a claim, which a version without retry claims leaves out of the conversation', async () => {
    const memory = new MessageWindowChatMemory();
    await memory.add('c', [{ role: 'user', content: 'Look them up' }, clientRound, { role: 'tool', content: [result('call_0', 'A'), result('call_1', 'B')] }]);
    const conversation = (await memory.repository.findByConversationId('c')).length;
    const claim = await memory.claimRetry('c', await memory.get('c'));
    assert.equal(claim.lost, false);
    await claim.end([]);
    const written = (await memory.repository.findByConversationId('c')).slice(conversation);
    assert.equal(written.length, 2, 'the claim and its end');
    for (const message of written) {
      assert.deepEqual(message.content, []);
      assert.equal(typeof message.providerOptions?.governor?.claimEnded, 'string', JSON.stringify(message.providerOptions));
    }
  });
});
