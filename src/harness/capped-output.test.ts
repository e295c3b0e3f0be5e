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
  const out = new CappedOutput(12);
  for (const chunk of ['0123 ', '56789', 'abcde', 'fghij', ' LMNO']) out.append(Buffer.from(chunk));
  assert.equal(out.totalBytes, 25);
  assert.equal(out.cutBytes, 13);
  const text = out.toString();
  assert.ok(text.startsWith('0123 \n'), text);
  assert.ok(text.endsWith('\n LMNO'), text);
  assert.match(text, /15 bytes cut/, 'the words the cut went through are cut too');
});

test('a single chunk larger than the limit is split into head and tail', () => {
  const out = new CappedOutput(6);
  out.append(Buffer.from('ab cdefgh ij'));
  const text = out.toString();
  assert.ok(text.startsWith('ab \n') && text.endsWith('\n ij'), text);
  assert.equal(out.cutBytes, 6);
});

test('a secret the cut goes through is cut whole, so redaction still finds what is left of it', () => {
  const token = `ghp_${'R8x2Kq9ZpL4mN7vB3cD6fG1hJ5kT0wYsXaEu'}`;
  const url = 'DATABASE_URL=postgres://app:S3cretPw99@db.internal:5432/prod';
  const out = new CappedOutput(200);
  // The head ends 14 characters into the token; the tail starts right after "postgres://app".
  const end = `${' z'.repeat(32)}  `;
  assert.equal(Buffer.byteLength(`${url.slice(url.indexOf(':S3cret'))}\n${end}`), 100);
  out.append(Buffer.from(`${'x '.repeat(40)}token ${token}\n${'y'.repeat(5000)}\n${url}\n${end}`));
  const text = out.toString();
  assert.ok(!text.includes(token.slice(0, 8)), text);
  assert.ok(!text.includes('S3cretPw99'), text);
  assert.ok(text.startsWith('x x ') && text.endsWith(end), text);
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
