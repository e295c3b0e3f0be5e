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

  test('a missing file rejects with the file system error', async () => {
    await assert.rejects(collect(path.join(dir, 'absent.jsonl')), { code: 'ENOENT' });
  });
});
