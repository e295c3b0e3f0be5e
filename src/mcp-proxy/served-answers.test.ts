import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ServedAnswers } from './served-answers.ts';

const LIMIT = 1_000;
/** An answer as the MCP SDK's server sends it. */
const answerOf = (id: string | number, result: unknown) => ({ result, jsonrpc: '2.0', id });

test('ServedAnswers: the answer measured is written as measured, also once parsed again as the SDK server does a tools/call result', () => {
  const answers = new ServedAnswers();
  const result = { content: [{ type: 'text', text: 'a result' }], structuredContent: { n: 1 } };
  answers.asked('a', 'tools/call "search"');
  const bytes = answers.measure('a', 'tools/call "search"', result, LIMIT);
  assert.equal(bytes, JSON.stringify(answerOf('a', result)).length);
  const reparsed = CallToolResultSchema.parse(result);
  assert.notEqual(reparsed, result);
  const answer = answerOf('a', reparsed);
  assert.equal(answers.take(answer), JSON.stringify(answer));
  assert.equal(answers.nameOf(answer), 'tools/call "search"');
  // Let go once answered.
  assert.equal(answers.take(answerOf('a', reparsed)), undefined);
});

test('ServedAnswers: an answer that is not the one measured is left to be serialized; so is one over the limit', () => {
  const answers = new ServedAnswers();
  const result = { content: [{ type: 'text', text: 'a result' }] };
  const cases: [string, object][] = [
    ['another text', answerOf(1, { content: [{ type: 'text', text: 'a result, and a note' }] })],
    ['another order', answerOf(2, { content: [{ text: 'a result', type: 'text' }] })],
    ['another field', answerOf(3, { ...result, isError: true })],
    ['not the SDK shape', { jsonrpc: '2.0', id: 4, result }],
    ['an error', { jsonrpc: '2.0', id: 5, error: { code: 1, message: 'no' } }],
  ];
  for (const [what, answer] of cases) {
    const { id } = answer as { id: number };
    answers.measure(id, 'tools/call "search"', result, LIMIT);
    assert.equal(answers.take(answer), undefined, what);
    assert.equal(answers.nameOf(answer), 'tools/call "search"', what);
  }
  const large = { content: [{ type: 'text', text: 'x'.repeat(LIMIT) }] };
  assert.ok(answers.measure(6, 'tools/call "large"', large, LIMIT) > LIMIT);
  assert.equal(answers.take(answerOf(6, large)), undefined);
});

test('ServedAnswers: a result is measured once; a cancelled request is let go; what answers nothing is left alone', () => {
  const answers = new ServedAnswers();
  const result = { tools: [] };
  const stringify = JSON.stringify;
  let calls = 0;
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    calls += 1;
    return stringify(...args);
  }) as typeof JSON.stringify;
  try {
    answers.measure(1, 'tools/list', result, LIMIT);
    answers.measure(1, 'tools/list', result, LIMIT);
  } finally {
    JSON.stringify = stringify;
  }
  assert.equal(calls, 1);
  answers.asked(2, 'tools/call "wait"');
  answers.measure(2, 'tools/call "wait"', result, LIMIT);
  answers.forget(2);
  const cancelled = answerOf(2, result);
  assert.equal(answers.take(cancelled), undefined);
  assert.equal(answers.nameOf(cancelled), undefined);
  const notification = { jsonrpc: '2.0', method: 'notifications/progress', id: 1 };
  assert.equal(answers.take(notification), undefined);
  assert.equal(answers.take(answerOf(1, result)), stringify(answerOf(1, result)));
});

test('ServedAnswers: unanswered lists the requests neither answered nor cancelled, in the order they arrived', () => {
  const answers = new ServedAnswers();
  answers.asked(1, 'tools/list');
  answers.asked('b', 'tools/call "wait"');
  answers.asked(3, 'tools/call "search"');
  answers.asked(4, 'resources/read');
  const refusal = { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'no' } };
  answers.take(refusal);
  answers.forget(4);
  assert.deepEqual(answers.unanswered(), [
    { id: 'b', name: 'tools/call "wait"' },
    { id: 3, name: 'tools/call "search"' },
  ]);
});
