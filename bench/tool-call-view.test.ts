import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { Trajectory } from '../src/replay/trajectory.ts';
import { runDetectionBenchmark } from './detection.ts';
import { asToolCalls, RETRIEVAL_TOOL } from './tool-call-view.ts';

/** The same search, six times, each time the same passage: a fixation from the third (step 5). */
const fixated: Trajectory = {
  id: 'fixated',
  source: 'unit',
  label: { stuck: true, category: 'rag_fixation', first_stuck_step: 5 },
  steps: Array.from({ length: 6 }, () => [
    { kind: 'model' as const, prompt_tokens: null, completion_tokens: null, text: 'Search[refund policy]' },
    { kind: 'retrieval' as const, query: 'refund policy', results: ['Refunds take 5 days.'] },
  ]).flat(),
};

describe('tool-call view of a trajectory', () => {
  test('retrieval and delegation steps become the tool calls they are in tool-only frameworks', () => {
    const t: Trajectory = {
      id: 'mixed',
      steps: [
        { kind: 'retrieval', query: 'refund policy', results: ['a', 'b'] },
        { kind: 'retrieval', query: 'refund policy' },
        { kind: 'delegation', agent: 'researcher', input: 'find the policy', output: 'it is 5 days' },
        { kind: 'user', text: 'thanks' },
      ],
    };
    assert.deepEqual(asToolCalls(t).steps, [
      { kind: 'tool_call', tool: RETRIEVAL_TOOL, args: { query: 'refund policy' }, result: 'a\n\nb' },
      { kind: 'tool_call', tool: RETRIEVAL_TOOL, args: { query: 'refund policy' }, result: null },
      { kind: 'tool_call', tool: 'researcher', args: { task: 'find the policy' }, result: 'it is 5 days' },
      { kind: 'user', text: 'thanks' },
    ]);
    const plain: Trajectory = { id: 'plain', steps: [{ kind: 'user', text: 'hi' }] };
    assert.equal(asToolCalls(plain), plain);
  });

  test('peers that compare tool calls see a repeated search as a repeated call', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'view-'));
    const file = path.join(dir, 'unit.jsonl');
    await writeFile(file, `${JSON.stringify(fixated)}\n`);
    const report = await runDetectionBenchmark([file]).finally(() => rm(dir, { recursive: true, force: true }));
    const roo = report.detectors.find((d) => d.name.startsWith('Roo Code'));
    // Roo Code refuses the 4th identical call: the 4th search, step 7.
    assert.equal(roo?.overall.truePositives, 1);
    assert.equal(roo?.overall.medianLag, 2);
  });
});
