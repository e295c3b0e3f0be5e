import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ModelMessage } from 'ai';
import { InvalidMessageError, MessageDecodingError } from './chat-memory-errors.ts';
import { decodeMessage, encodeMessage, encodeMessages } from './message-codec.ts';
import { sampleConversation } from './test-support/sample-messages.ts';

function toolCall(input: unknown): ModelMessage {
  return { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input }] };
}

test('every message of the sample conversation decodes to an equal message', () => {
  for (const message of sampleConversation()) {
    assert.deepStrictEqual(decodeMessage(encodeMessage(message)), message);
  }
});

test('stored form is JSON text with binary data as base64 and URLs as strings', () => {
  const stored = encodeMessage({
    role: 'user',
    content: [
      { type: 'image', image: new Uint8Array([1, 2, 3]) },
      { type: 'file', data: new URL('https://example.com/x'), mediaType: 'text' },
    ],
  });
  const parsed = JSON.parse(stored) as { content: [{ image: unknown }, { data: unknown }] };
  assert.deepStrictEqual(parsed.content[0].image, { $governor: 'bytes', base64: 'AQID' });
  assert.deepStrictEqual(parsed.content[1].data, { $governor: 'url', href: 'https://example.com/x' });
});

test('values JSON cannot carry survive: undefined, NaN, infinities, -0, Date, ArrayBuffer, Uint8Array views', () => {
  const bytes = new Uint8Array([5, 6, 7, 8]);
  const input = {
    missing: undefined,
    list: [undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0],
    when: new Date('2024-02-29T12:00:00.000Z'),
    buffer: new Uint8Array([1, 2]).buffer,
    view: bytes.subarray(1, 3),
  };
  const decoded = decodeMessage(encodeMessage(toolCall(input)));
  assert.deepStrictEqual(decoded, toolCall({ ...input, view: new Uint8Array([6, 7]) }));
});

test('user data that looks like a codec tag is stored as data, at any depth', () => {
  const input = {
    $governor: 'url',
    href: 'https://example.com',
    deeper: [{ $governor: 'object', value: { $governor: 'bytes', base64: 'AA==' } }],
  };
  assert.deepStrictEqual(decodeMessage(encodeMessage(toolCall(input))), toolCall(input));
});

test('values with no faithful stored form are rejected with the message index and path', () => {
  const circular: Record<string, unknown> = {};
  circular['self'] = circular;
  const cases: Array<[unknown, string, RegExp]> = [
    [{ f: () => 1 }, 'content[0].input.f', /function/],
    [{ n: [1, 2n] }, 'content[0].input.n[1]', /bigint/],
    [{ m: new Map() }, 'content[0].input.m', /Map/],
    [{ s: Symbol('x') }, 'content[0].input.s', /symbol/],
    [circular, 'content[0].input.self', /circular/],
  ];
  for (const [input, path, problem] of cases) {
    assert.throws(
      () => encodeMessages([{ role: 'user', content: 'fine' }, toolCall(input)]),
      (error: unknown) => {
        assert.ok(error instanceof InvalidMessageError);
        assert.equal(error.code, 'GOVERNOR_INVALID_MESSAGE');
        assert.equal(error.index, 1);
        assert.equal(error.path, path);
        assert.match(error.message, problem);
        return true;
      },
    );
  }
});

test('an own __proto__ key (e.g. from JSON.parse of an API answer) round-trips as data and pollutes nothing', () => {
  const value = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
  const message: ModelMessage = {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'json', value: value as never } }],
  };
  const stored = encodeMessage(message);
  assert.match(stored, /"__proto__":\{"polluted":true\}/);

  const decoded = decodeMessage(stored);
  const output = (decoded.content[0] as { output: { value: Record<string, unknown> } }).output.value;
  assert.ok(Object.hasOwn(output, '__proto__'), 'an own key, not the prototype');
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(output, '__proto__')?.value, { polluted: true });
  assert.equal(Object.getPrototypeOf(output), Object.prototype);
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  assert.deepStrictEqual(decoded, message);
});

test('the same object twice (not a cycle) is fine', () => {
  const shared = { a: 1 };
  const message = toolCall({ first: shared, second: shared });
  assert.deepStrictEqual(decodeMessage(encodeMessage(message)), message);
});

test('things that are not chat messages are rejected', () => {
  const bad: unknown[] = [
    null,
    'hello',
    { role: 'robot', content: 'x' },
    { role: 'system', content: [{ type: 'text', text: 'x' }] },
    { role: 'tool', content: 'x' },
    { role: 'user', content: [{ text: 'no type' }] },
  ];
  for (const message of bad) {
    assert.throws(
      () => encodeMessage(message as ModelMessage, 3),
      (error: unknown) => {
        assert.ok(error instanceof InvalidMessageError);
        assert.equal(error.index, 3);
        return true;
      },
    );
  }
});

test('stored data that is not a message is reported as such', () => {
  for (const stored of ['{not json', '{"role":"user"}', '{"role":"user","content":{"$governor":"mystery"}}']) {
    assert.throws(() => decodeMessage(stored), MessageDecodingError);
  }
});
