import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { splitStructuredMarkdown, stripStructuredMarkdown } from './prose.ts';

describe('structured markdown', () => {
  const text = [
    'Here is the fix for the slice.',
    '',
    '```python',
    'def paginate(items, page, size):',
    '    return items[start:start + size]',
    '```',
    '',
    '| page | items |',
    '|---|---|',
    '| 2 | 11-20 |',
    '',
    '- run the tests again',
    '1. check the boundaries',
    '',
    '    indented = "code"',
    'That should do it.',
  ].join('\n');

  test('code blocks, tables, list items and indented code go to the structured part, in order', () => {
    const { prose, structured } = splitStructuredMarkdown(text);
    assert.deepEqual(
      prose.split('\n').filter((l) => l.trim() !== ''),
      ['Here is the fix for the slice.', 'That should do it.'],
    );
    assert.deepEqual(structured.split('\n'), [
      '```python',
      'def paginate(items, page, size):',
      '    return items[start:start + size]',
      '```',
      '| page | items |',
      '|---|---|',
      '| 2 | 11-20 |',
      '- run the tests again',
      '1. check the boundaries',
      '    indented = "code"',
    ]);
  });

  test('plain prose has no structured part, and stripping keeps exactly the prose', () => {
    const plain = 'No tables here.\nJust two lines, one with a single | pipe.';
    assert.deepEqual(splitStructuredMarkdown(plain), { prose: plain, structured: '' });
    assert.equal(stripStructuredMarkdown(text), splitStructuredMarkdown(text).prose);
  });

  test('an unclosed fence keeps the rest of the text structured', () => {
    const { prose, structured } = splitStructuredMarkdown('Intro line.\n~~~\nstill code\nmore code');
    assert.equal(prose, 'Intro line.');
    assert.equal(structured, '~~~\nstill code\nmore code');
  });

  test('a one-line text is split as the same line is among others', () => {
    const lines = [
      'Just prose.',
      '',
      '    ',
      '    indented = 1',
      '\tx = 2',
      '- item',
      '12) step',
      '| a | b |',
      'a | b | c',
      'one | pipe',
      '```js',
      '~~~',
      '  ```',
    ];
    for (const line of lines) {
      const alone = splitStructuredMarkdown(line);
      // A closing plain line ends nothing but a fence; fenced lines are left out of the comparison.
      const among = splitStructuredMarkdown(`${line}\nPlain words.`);
      const fenced = /^\s*(```|~~~)/.test(line);
      assert.equal(alone.structured, fenced ? line : among.structured, JSON.stringify(line));
      assert.equal(alone.prose, fenced ? '' : among.prose.slice(0, -'\nPlain words.'.length), JSON.stringify(line));
    }
  });
});
