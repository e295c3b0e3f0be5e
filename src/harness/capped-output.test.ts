import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedOutput } from './capped-output.ts';

test('keeps everything under the limit', () => {
  const out = new CappedOutput(10);
  out.append(Buffer.from('abc'));
  out.append(Buffer.from('def'));
  assert.equal(out.toString(), 'abcdef');
  assert.equal(out.cutBytes, 0);
});

test('keeps head and tail and notes how many bytes were cut', () => {
  const out = new CappedOutput(10);
  for (const chunk of ['01234', '56789', 'abcde', 'fghij', 'KLMNO']) out.append(Buffer.from(chunk));
  assert.equal(out.totalBytes, 25);
  assert.equal(out.cutBytes, 15);
  const text = out.toString();
  assert.ok(text.startsWith('01234\n'), text);
  assert.ok(text.endsWith('\nKLMNO'), text);
  assert.match(text, /15 bytes cut/);
});

test('a single chunk larger than the limit is split into head and tail', () => {
  const out = new CappedOutput(4);
  out.append(Buffer.from('abcdefghij'));
  const text = out.toString();
  assert.ok(text.startsWith('ab\n') && text.endsWith('\nij'), text);
  assert.equal(out.cutBytes, 6);
});

test('a character a cut goes through is cut whole, with the bytes counted: the text holds no U+FFFD', () => {
  for (const text of ['é'.repeat(21), '€'.repeat(14), '日本語のテキスト'.repeat(3), '🙂'.repeat(11)]) {
    for (const limit of [5, 6, 7, 11]) {
      const out = new CappedOutput(limit);
      out.append(Buffer.from(text));
      const kept = out.toString();
      assert.ok(!kept.includes('\uFFFD'), `${JSON.stringify(kept)} (limit ${limit})`);
      const [head, note, tail] = kept.split('\n');
      const cut = Number(/\[\.\.\. (\d+) bytes cut/.exec(note ?? '')?.[1]);
      assert.equal(Buffer.byteLength(head!) + cut + Buffer.byteLength(tail!), Buffer.byteLength(text), 'every byte kept or counted as cut');
      assert.ok(text.startsWith(head!) && text.endsWith(tail!));
    }
  }
});
