import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { isMalformedLine, readTrajectories, type TrajectoryRecord } from './read-trajectories.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'governor-read-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: readonly string[], eol = '\n'): string {
  const target = path.join(dir, name);
  fs.writeFileSync(target, lines.join(eol) + eol);
  return target;
}

async function collect(source: string | NodeJS.ReadableStream): Promise<TrajectoryRecord[]> {
  const records: TrajectoryRecord[] = [];
  for await (const record of readTrajectories(source)) records.push(record);
  return records;
}

const full = {
  id: 'full',
  source: 'unit',
  task: 'book a flight',
  extra_field: { ignored: true },
  steps: [
    { kind: 'user', text: 'hi' },
    { kind: 'model', prompt_tokens: 120, completion_tokens: 30, text: 'calling', unknown: 1 },
    { kind: 'tool_call', tool: 'search', args: { q: 'x', page: 2 }, result: 'r', error: false },
    { kind: 'tool_call', tool: 'bash', args: 'ls -la', result: null },
    { kind: 'retrieval', query: 'docs', results: ['a', 'b'] },
    { kind: 'retrieval', query: 'more' },
    { kind: 'delegation', agent: 'researcher', input: 'find', output: 'found' },
    { kind: 'model', prompt_tokens: null, completion_tokens: null, text: '' },
  ],
  outcome: { reward: 1 },
  label: { stuck: true, category: 'tool_spiral', first_stuck_step: 3 },
};

describe('readTrajectories', () => {
  test('reads every field of the format and ignores unknown ones', async () => {
    const records = await collect(file('full.jsonl', [JSON.stringify(full)]));
    assert.equal(records.length, 1);
    const record = records[0];
    assert.ok(record && !isMalformedLine(record));
    const t = record.trajectory;
    assert.equal(record.lineNumber, 1);
    assert.equal(t.id, 'full');
    assert.equal(t.source, 'unit');
    assert.equal(t.task, 'book a flight');
    assert.deepEqual(t.outcome, { reward: 1 });
    assert.deepEqual(t.label, { stuck: true, category: 'tool_spiral', first_stuck_step: 3 });
    assert.equal(t.steps.length, 8);
    assert.deepEqual(t.steps[1], { kind: 'model', prompt_tokens: 120, completion_tokens: 30, text: 'calling' });
    assert.deepEqual(t.steps[2], { kind: 'tool_call', tool: 'search', args: { q: 'x', page: 2 }, result: 'r', error: false });
    assert.deepEqual(t.steps[3], { kind: 'tool_call', tool: 'bash', args: 'ls -la', result: null });
    assert.deepEqual(t.steps[4], { kind: 'retrieval', query: 'docs', results: ['a', 'b'] });
    assert.deepEqual(t.steps[5], { kind: 'retrieval', query: 'more' });
    assert.deepEqual(t.steps[6], { kind: 'delegation', agent: 'researcher', input: 'find', output: 'found' });
    assert.equal('extra_field' in t, false);
  });

  test('a malformed line is reported without the excerpt of it JSON.parse quotes, which may be part of a secret', async () => {
    const records = await collect(
      file('secret.jsonl', ['{"id": "a", "env": {"AWS_SECRET_ACCESS_KEY":wJalrXUtnFEMI/K7MDENG}}', '{"id": "b", "token": "ghp_abc', '{"id": "c", "n": 1,}']),
    );
    const errors = records.map((r) => (isMalformedLine(r) ? r.error : ''));
    assert.equal(errors.length, 3);
    for (const error of errors) {
      assert.match(error, /^invalid JSON/);
      assert.doesNotMatch(error, /wJalr|ghp_|\.\.\."/);
    }
    // What went wrong and where is still said.
    assert.match(errors[0]!, /Unexpected token 'w' \(not valid JSON\)/);
    assert.match(errors[1]!, /Unterminated string in JSON at position \d+/);
  });

  test('reports malformed lines with their line numbers and keeps reading', async () => {
    const good = (id: string) => JSON.stringify({ id, steps: [{ kind: 'user', text: 'x' }] });
    const records = await collect(
      file('mixed.jsonl', [
        good('a'),
        '{"id": "broken", "steps": [',
        JSON.stringify({ steps: [] }),
        JSON.stringify({ id: 'no-steps' }),
        JSON.stringify({ id: 'weird', steps: [{ kind: 'user', text: 'ok' }, { kind: 'telepathy' }] }),
        JSON.stringify({ id: 'bad-args', steps: [{ kind: 'tool_call', tool: 't', args: 42, result: null }] }),
        '',
        good('b'),
      ]),
    );
    const summary = records.map((r) => (isMalformedLine(r) ? `E${r.lineNumber}:${r.error}` : `T${r.lineNumber}:${r.trajectory.id}`));
    assert.equal(summary.length, 7);
    assert.equal(summary[0], 'T1:a');
    assert.match(summary[1] ?? '', /^E2:invalid JSON/);
    assert.match(summary[2] ?? '', /^E3:missing "id"/);
    assert.match(summary[3] ?? '', /^E4:.*"no-steps".*missing "steps"/);
    assert.match(summary[4] ?? '', /^E5:.*steps\[1\]: unknown step kind "telepathy"/);
    assert.match(summary[5] ?? '', /^E6:.*steps\[0\]\.args: must be an object or a string/);
    // The blank line 7 is skipped, the count of lines is not.
    assert.equal(summary[6], 'T8:b');
  });

  test('a token count that is not a whole number a double holds exactly is a malformed line', async () => {
    const model = (prompt: unknown, completion: unknown = null) =>
      JSON.stringify({ id: `t${String(prompt)}`, steps: [{ kind: 'model', prompt_tokens: prompt, completion_tokens: completion, text: '' }] });
    const lines = [
      model(0.5, 0.25),
      '{"id":"huge","steps":[{"kind":"model","prompt_tokens":1e308,"completion_tokens":null}]}',
      model(Number.MAX_SAFE_INTEGER + 1),
      model(-1),
      model('12'),
      model(12, 0.5),
      model(Number.MAX_SAFE_INTEGER, 0),
      model(null),
      '{"id":"whole-float","steps":[{"kind":"model","prompt_tokens":12.0,"completion_tokens":3}]}',
    ];
    const records = await collect(file('tokens.jsonl', lines));
    const summary = records.map((r) => (isMalformedLine(r) ? `E${r.lineNumber}:${r.error}` : `T${r.lineNumber}`));
    assert.match(summary[0] ?? '', /^E1:.*steps\[0\]\.prompt_tokens: must be a non-negative whole number .* or null, got 0\.5$/);
    assert.match(summary[1] ?? '', /^E2:.*steps\[0\]\.prompt_tokens: .*got 1e\+308$/);
    assert.match(summary[2] ?? '', /^E3:.*steps\[0\]\.prompt_tokens: must be a non-negative whole number \(at most 9007199254740991\)/);
    assert.match(summary[3] ?? '', /^E4:.*got -1$/);
    assert.match(summary[4] ?? '', /^E5:.*got string$/);
    assert.match(summary[5] ?? '', /^E6:.*steps\[0\]\.completion_tokens: .*got 0\.5$/);
    assert.deepEqual(summary.slice(6), ['T7', 'T8', 'T9']);
  });

  test('handles CRLF line endings and a byte-order mark', async () => {
    const target = path.join(dir, 'crlf.jsonl');
    fs.writeFileSync(target, '\ufeff' + JSON.stringify({ id: 'x', steps: [] }) + '\r\n' + JSON.stringify({ id: 'y', steps: [] }) + '\r\n');
    const ids = (await collect(target)).map((r) => (isMalformedLine(r) ? r.error : r.trajectory.id));
    assert.deepEqual(ids, ['x', 'y']);
  });

  test('yields each trajectory before the rest of the input exists (streams, never loads whole)', async () => {
    let firstSeen!: () => void;
    const seen = new Promise<void>((resolve) => (firstSeen = resolve));
    const input = Readable.from(
      (async function* () {
        yield JSON.stringify({ id: 'first', steps: [] }) + '\n';
        // The second line is only produced after the reader handed out the first.
        const timedOut = await Promise.race([seen.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), 3000).unref())]);
        if (timedOut) throw new Error('the reader waited for the whole input before yielding the first line');
        yield JSON.stringify({ id: 'second', steps: [] }) + '\n';
      })(),
    );
    const ids: string[] = [];
    for await (const record of readTrajectories(input)) {
      assert.ok(!isMalformedLine(record));
      ids.push(record.trajectory.id);
      if (ids.length === 1) firstSeen();
    }
    assert.deepEqual(ids, ['first', 'second']);
  });

  test('a raw U+2028 / U+2029 inside a string stays in its line; line numbers stay exact', async () => {
    const target = path.join(dir, 'separators.jsonl');
    const withSeparators = `{"id":"sep","steps":[{"kind":"user","text":"a\u2028b\u2029c"}]}`;
    fs.writeFileSync(target, [withSeparators, JSON.stringify({ id: 'next', steps: [] })].join('\n') + '\n');
    const records = await collect(target);
    assert.deepEqual(
      records.map((r) => (isMalformedLine(r) ? `E${r.lineNumber}` : `T${r.lineNumber}:${r.trajectory.id}`)),
      ['T1:sep', 'T2:next'],
    );
    const first = records[0]!;
    assert.ok(!isMalformedLine(first));
    assert.deepEqual(first.trajectory.steps[0], { kind: 'user', text: 'a\u2028b\u2029c' });
  });

  test('a line over maxLineBytes is reported and skipped without stopping the file', async () => {
    const huge = JSON.stringify({ id: 'huge', steps: [{ kind: 'user', text: 'x'.repeat(50_000) }] });
    // Fed in small chunks, as a file is read: the long line never has to fit in one.
    const text = [JSON.stringify({ id: 'a', steps: [] }), huge, JSON.stringify({ id: 'b', steps: [] })].join('\r\n') + '\r\n';
    const input = Readable.from(
      (function* () {
        for (let i = 0; i < text.length; i += 997) yield Buffer.from(text.slice(i, i + 997));
      })(),
    );
    const records: TrajectoryRecord[] = [];
    for await (const record of readTrajectories(input, { maxLineBytes: 10_000 })) records.push(record);
    assert.deepEqual(
      records.map((r) => (isMalformedLine(r) ? `E${r.lineNumber}:${r.error}` : `T${r.lineNumber}:${r.trajectory.id}`)),
      ['T1:a', 'E2:line is longer than 10000 bytes (maxLineBytes); skipped', 'T3:b'],
    );
  });

  test('a byte-order mark mid-file and duplicate ids are reported as warnings; the lines are still used', async () => {
    const target = path.join(dir, 'concatenated.jsonl');
    const line = (id: string) => JSON.stringify({ id, steps: [] });
    fs.writeFileSync(target, `\ufeff${line('a')}\n${line('b')}\n\ufeff${line('c')}\n${line('a')}\n`);
    const records = await collect(target);
    assert.deepEqual(
      records.map((r) => (isMalformedLine(r) ? r.error : [r.lineNumber, r.trajectory.id, r.warnings ?? []])),
      [
        [1, 'a', []],
        [2, 'b', []],
        [3, 'c', ['byte-order mark at the start of the line (concatenated files?); ignored']],
        [4, 'a', ['duplicate id "a" (first on line 1)']],
      ],
    );
  });

  test('a line nested deeper than maxDepth is reported, not a stack overflow', async () => {
    const deep = `{"id":"deep","steps":[{"kind":"tool_call","tool":"t","args":{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}},"result":null}]}`;
    const records = await collect(file('deep.jsonl', [deep, JSON.stringify({ id: 'ok', steps: [] })]));
    assert.deepEqual(
      records.map((r) => (isMalformedLine(r) ? `E${r.lineNumber}:${r.error}` : `T${r.lineNumber}:${r.trajectory.id}`)),
      ['E1:nests deeper than 256 levels of arrays and objects (maxDepth); skipped', 'T2:ok'],
    );
  });

  test('a file that does not end with a newline still yields its last line', async () => {
    const target = path.join(dir, 'no-eol.jsonl');
    fs.writeFileSync(target, `${JSON.stringify({ id: 'a', steps: [] })}\n${JSON.stringify({ id: 'last', steps: [] })}`);
    assert.deepEqual(
      (await collect(target)).map((r) => (isMalformedLine(r) ? r.error : r.trajectory.id)),
      ['a', 'last'],
    );
  });

  test('a label that is not a label makes its line malformed, as a labelled corpus needs; with unreadableLabel "warn" the run is kept without it', async () => {
    const target = file('labels.jsonl', [
      JSON.stringify({ id: 'word', label: 'looping', steps: [{ kind: 'user', text: 'hi' }] }),
      JSON.stringify({ id: 'half', label: { stuck: 'yes' }, steps: [] }),
      JSON.stringify({ id: 'good', label: { stuck: false }, steps: [] }),
    ]);
    const strict = await collect(target);
    assert.deepEqual(
      strict.map((r) => (isMalformedLine(r) ? r.error : r.trajectory.id)),
      [
        'trajectory "word": label: must be an object like {"stuck": true, "category": "tool_spiral", "first_stuck_step": 4}, got a string',
        'trajectory "half": label.stuck: must be a boolean',
        'good',
      ],
    );
    const lenient: TrajectoryRecord[] = [];
    for await (const record of readTrajectories(target, { unreadableLabel: 'warn' })) lenient.push(record);
    assert.deepEqual(lenient, [
      {
        lineNumber: 1,
        trajectory: { id: 'word', steps: [{ kind: 'user', text: 'hi' }] },
        warnings: [
          'trajectory "word": label: must be an object like {"stuck": true, "category": "tool_spiral", "first_stuck_step": 4}, got a string; the label is ignored',
        ],
      },
      { lineNumber: 2, trajectory: { id: 'half', steps: [] }, warnings: ['trajectory "half": label.stuck: must be a boolean; the label is ignored'] },
      { lineNumber: 3, trajectory: { id: 'good', steps: [], label: { stuck: false } } },
    ]);
    await assert.rejects(readTrajectories(target, { unreadableLabel: 'skip' as 'warn' }).next(), { code: 'GOVERNOR_INVALID_OPTION' });
  });

  test('a missing file rejects with the file system error', async () => {
    await assert.rejects(collect(path.join(dir, 'absent.jsonl')), { code: 'ENOENT' });
  });
});
