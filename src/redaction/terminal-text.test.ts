import assert from 'node:assert/strict';
import { test } from 'node:test';
import { printable, terminalText } from './terminal-text.ts';

test('terminalText escapes what a terminal would obey, keeps newlines, tabs and other text', () => {
  const hostile = 'ok\u001b]0;PWNED\u0007\u001b[31mRED\u001b[2J\r\u009b31m\u007f\u0000';
  assert.equal(terminalText(hostile), 'ok\\u001b]0;PWNED\\u0007\\u001b[31mRED\\u001b[2J\\u000d\\u009b31m\\u007f\\u0000');
  assert.equal(terminalText('line 1\n\tline 2 — ✈️ 東京 é'), 'line 1\n\tline 2 — ✈️ 東京 é');
  // Inside a JSON string the escape stands for the same character.
  const json = JSON.stringify({ text: 'a\u009bb' });
  assert.equal(JSON.parse(terminalText(json)).text, 'a\u009bb');
});

test('printable redacts secrets and escapes control characters', () => {
  const line = printable('key sk-proj-abcdefghijklmnopqrstuvwx1234 then \u001b[2J');
  assert.doesNotMatch(line, /abcdefghijklmnop/);
  assert.match(line, /\[REDACTED\] then \\u001b\[2J$/);
});

test('terminalText escapes the bidirectional-text controls, which would reorder what is printed after them', () => {
  const reversing = 'run-\u202elmth.exe \u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c';
  assert.equal(terminalText(reversing), 'run-\\u202elmth.exe \\u202a\\u202b\\u202c\\u202d \\u2066\\u2067\\u2068\\u2069 \\u200e\\u200f\\u061c');
  // Right-to-left text itself is printed as it is: only the invisible controls are escaped.
  assert.equal(terminalText('שלום مرحبا'), 'שלום مرحبا');
  assert.equal(JSON.parse(terminalText(JSON.stringify({ id: 'a\u202eb' }))).id, 'a\u202eb');
});
