import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isMalformedLine, readTrajectories } from '../../src/replay/read-trajectories.ts';
import { countsIn, renderCounts } from './corpus-counts.ts';
import { CATEGORIES, type Category, type CorpusTrajectory, type Step } from './corpus-trajectory.ts';
import { isLookalikeFamily, isStuckFamily, LOOKALIKE_FAMILIES, STUCK_FAMILIES } from './families.ts';
import { buildCorpus } from './generate.ts';
import { MAX_RESULT_CHARS } from './text.ts';
import { categoryFitsStep, DRIFT_FACTOR } from './trajectory-builder.ts';

const here = import.meta.dirname;
const committed = fs
  .readdirSync(here)
  .filter((n) => n.endsWith('.jsonl'))
  .sort();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'governor-corpus-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Every committed trajectory as written (extra fields included), with its file. */
const corpus: { file: string; t: CorpusTrajectory }[] = committed.flatMap((file) =>
  fs
    .readFileSync(path.join(here, file), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => ({ file, t: JSON.parse(l) as CorpusTrajectory })),
);

describe('corpus files', () => {
  before(() => {
    const run = spawnSync(process.execPath, [path.join(here, 'generate.ts'), '--out', tmp], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });

  test('regenerating into a fresh folder gives byte-identical files', () => {
    const regenerated = fs
      .readdirSync(tmp)
      .filter((n) => n.endsWith('.jsonl'))
      .sort();
    assert.deepEqual(regenerated, committed);
    for (const name of committed) {
      const a = fs.readFileSync(path.join(here, name));
      const b = fs.readFileSync(path.join(tmp, name));
      assert.ok(a.equals(b), `${name} differs from a fresh generation: run bench/corpus/generate.ts`);
    }
  });

  test('every line reads through readTrajectories without a malformed line', async () => {
    for (const name of committed) {
      let lines = 0;
      for await (const record of readTrajectories(path.join(here, name))) {
        assert.ok(!isMalformedLine(record), `${name}:${record.lineNumber}: ${isMalformedLine(record) ? record.error : ''}`);
        assert.ok(record.trajectory.label !== undefined, `${name}:${record.lineNumber}: unlabelled`);
        lines++;
      }
      assert.equal(lines, corpus.filter((c) => c.file === name).length);
    }
  });

  test('the README counts match the files', () => {
    const readme = fs.readFileSync(path.join(here, 'README.md'), 'utf8');
    assert.equal(countsIn(readme), renderCounts(buildCorpus()).trim());
  });

  test('size, number and stuck share stay in range', () => {
    const bytes = committed.reduce((sum, n) => sum + fs.statSync(path.join(here, n)).size, 0);
    assert.ok(bytes < 15 * 1024 * 1024, `${bytes} bytes`);
    assert.ok(corpus.length >= 500 && corpus.length <= 700, `${corpus.length} trajectories`);
    const share = corpus.filter((c) => c.t.label.stuck).length / corpus.length;
    assert.ok(share >= 0.3 && share <= 0.4, `stuck share ${share}`);
    const handwritten = corpus.filter((c) => c.t.source === 'handwritten').length;
    assert.ok(handwritten >= 30 && handwritten <= 60, `${handwritten} handwritten`);
  });
});

describe('trajectories', () => {
  test('ids are unique across all files, and every trajectory has source, task, family and note', () => {
    const seen = new Set<string>();
    for (const { file, t } of corpus) {
      assert.ok(!seen.has(t.id), `${file}: duplicate id ${t.id}`);
      seen.add(t.id);
      assert.ok(t.source.length > 0 && t.task.length > 0 && t.note.length > 0, t.id);
      assert.ok(t.id.includes(`/${t.family}/`), `${t.id}: id does not carry family ${t.family}`);
    }
  });

  test('every tool call, retrieval and delegation follows the model step that requested it', () => {
    for (const { t } of corpus) {
      let requester: Step['kind'] | undefined;
      t.steps.forEach((s, i) => {
        if (s.kind === 'model' || s.kind === 'user') requester = s.kind;
        else assert.equal(requester, 'model', `${t.id}: step ${i} (${s.kind}) does not follow a model step`);
      });
    }
  });

  test('tool results stay within the truncation limit', () => {
    for (const { t } of corpus) {
      for (const s of t.steps) {
        if (s.kind === 'tool_call' && s.result !== null) assert.ok(s.result.length <= MAX_RESULT_CHARS, `${t.id}: result of ${s.result.length} chars`);
      }
    }
  });

  test('labels are well formed and point at a step of the right kind', () => {
    for (const { t } of corpus) {
      const label = t.label as unknown as Record<string, unknown>;
      if (t.label.stuck) {
        assert.deepEqual(Object.keys(label).sort(), ['category', 'first_stuck_step', 'stuck'], t.id);
        const { category, first_stuck_step: first } = t.label;
        assert.ok((CATEGORIES as readonly string[]).includes(category), `${t.id}: category ${category}`);
        assert.ok(Number.isInteger(first) && first >= 0 && first < t.steps.length, `${t.id}: first_stuck_step ${first}`);
        assert.ok(categoryFitsStep(category, t.steps[first] as Step), `${t.id}: step ${first} is ${t.steps[first]?.kind}, not fit for ${category}`);
      } else {
        assert.deepEqual(Object.keys(label), ['stuck'], `${t.id}: a productive label carries only stuck:false`);
      }
    }
  });

  test('loop families are labelled stuck and look-alike families productive', () => {
    for (const { t } of corpus) {
      if (isStuckFamily(t.family)) assert.equal(t.label.stuck, true, t.id);
      else assert.ok(isLookalikeFamily(t.family) && !t.label.stuck, t.id);
    }
  });

  test('the first stuck step is a third occurrence of what repeats', () => {
    const sameAs = (a: Step, b: Step, category: Category): boolean => {
      if (category === 'rag_fixation') return b.kind === 'retrieval';
      if (category === 'other') return b.kind === 'model' && a.kind === 'model';
      if (a.kind === 'tool_call') return b.kind === 'tool_call' && b.tool === a.tool;
      if (a.kind === 'delegation') return b.kind === 'delegation' && b.agent === a.agent;
      return false;
    };
    for (const { t } of corpus) {
      if (!t.label.stuck || t.label.category === 'token_drift') continue;
      const first = t.label.first_stuck_step;
      const at = t.steps[first] as Step;
      const earlier = t.steps.slice(0, first).filter((s) => sameAs(at, s, t.label.stuck ? t.label.category : 'other'));
      assert.ok(earlier.length >= 2, `${t.id}: step ${first} has ${earlier.length} earlier occurrences`);
    }
  });

  test('token-drift labels sit on the third consecutive growth of at least 1.35x', () => {
    let drift = 0;
    for (const { t } of corpus) {
      if (!t.label.stuck || t.label.category !== 'token_drift') continue;
      drift++;
      const first = t.label.first_stuck_step;
      const prompts = t.steps
        .slice(0, first + 1)
        .filter((s) => s.kind === 'model')
        .map((s) => (s.kind === 'model' ? s.prompt_tokens : null));
      const last4 = prompts.slice(-4);
      assert.equal(last4.length, 4, t.id);
      for (let i = 1; i < 4; i++) {
        const [a, b] = [last4[i - 1], last4[i]];
        assert.ok(a !== null && a !== undefined && b !== null && b !== undefined && b >= a * DRIFT_FACTOR, `${t.id}: growth ${i} is ${b}/${a}`);
      }
    }
    assert.ok(drift > 0);
  });

  test('productive runs never repeat the same call with the same result three times in a row', () => {
    // The labelling rule, checked on the data: bounded transient retries are the only allowed run of three.
    const transient = /\b(503|429|502)\b|timed? ?out|ETIMEDOUT/i;
    for (const { t } of corpus) {
      if (t.label.stuck) continue;
      let last = '';
      let run = 0;
      for (const s of t.steps) {
        if (s.kind === 'model' || (s.kind === 'tool_call' && s.tool === 'think')) continue;
        const key = s.kind === 'tool_call' ? JSON.stringify([s.tool, s.args, s.result]) : JSON.stringify(s);
        run = key === last ? run + 1 : 1;
        last = key;
        if (run >= 3 && !(s.kind === 'tool_call' && transient.test(s.result ?? ''))) assert.fail(`${t.id}: ${s.kind} repeated ${run}x unchanged`);
      }
    }
  });
});

describe('coverage', () => {
  test('every category occurs, in more than one source', () => {
    for (const category of CATEGORIES) {
      const sources = new Set(corpus.filter((c) => c.t.label.stuck && c.t.label.category === category).map((c) => c.t.source));
      assert.ok(sources.size >= 2, `${category}: ${[...sources].join(', ')}`);
    }
  });

  test('every loop and look-alike family occurs', () => {
    for (const family of [...Object.keys(STUCK_FAMILIES), ...Object.keys(LOOKALIKE_FAMILIES)]) {
      const n = corpus.filter((c) => c.t.family === family).length;
      assert.ok(n > 0, `no trajectory of family ${family}`);
    }
  });

  test('delegation loops occur both as delegation steps and as sub-agent tool calls', () => {
    const kinds = new Set(
      corpus
        .filter((c) => c.t.label.stuck && c.t.label.category === 'delegation_loop')
        .map((c) => c.t.steps[c.t.label.stuck ? c.t.label.first_stuck_step : 0]?.kind),
    );
    assert.deepEqual([...kinds].sort(), ['delegation', 'tool_call']);
  });

  test('spirals both recover and run to the end', () => {
    const spirals = corpus.filter((c) => c.t.family === 'spiral-identical' || c.t.family === 'spiral-varied-args');
    assert.ok(spirals.some((c) => c.t.variant.includes('recovers')));
    assert.ok(spirals.some((c) => c.t.variant.includes('runs to the end')));
  });

  test('short cycles cover periods 2 to 5', () => {
    const periods = new Set<number>();
    for (const { t } of corpus) {
      if (t.family !== 'short-cycle' || !t.label.stuck) continue;
      const calls: Step[] = t.steps.filter((s) => s.kind === 'tool_call' || s.kind === 'delegation');
      const at = t.steps[t.label.first_stuck_step] as Step;
      const idx = calls.indexOf(at);
      // The period is the distance back to the previous occurrence of the same call.
      const key = (s: Step): string => JSON.stringify(s.kind === 'tool_call' ? [s.tool, s.args] : s.kind === 'delegation' ? [s.agent] : s);
      for (let p = 1; p <= idx; p++)
        if (key(calls[idx - p] as Step) === key(at)) {
          periods.add(p);
          break;
        }
    }
    for (const p of [2, 3, 4, 5]) assert.ok(periods.has(p), `no cycle of period ${p} (have ${[...periods].join(', ')})`);
  });

  test('non-Latin loops and look-alikes cover Japanese, Chinese, Korean, Russian and Arabic', () => {
    const scripts: Record<string, RegExp> = {
      ja: /[\u3040-\u30ff]/,
      zh: /[\u4e00-\u9fff]/,
      ko: /[\uac00-\ud7af]/,
      ru: /[\u0400-\u04ff]/,
      ar: /[\u0600-\u06ff]/,
    };
    for (const family of ['non-latin-loop', 'non-latin-varied']) {
      const texts = corpus.filter((c) => c.t.family === family).map((c) => JSON.stringify(c.t.steps));
      for (const [lang, re] of Object.entries(scripts))
        assert.ok(
          texts.some((s) => re.test(s)),
          `${family}: no ${lang} text`,
        );
    }
  });

  test('long coding runs have 60 to 150 steps, and token counts are present in most of the corpus', () => {
    for (const { t } of corpus.filter((c) => c.t.family === 'long-coding-run')) {
      assert.ok(t.steps.length >= 60 && t.steps.length <= 150, `${t.id}: ${t.steps.length} steps`);
    }
    const counted = corpus.filter((c) => c.t.steps.some((s) => s.kind === 'model' && s.prompt_tokens !== null)).length;
    const unknown = corpus.length - counted;
    assert.ok(counted > corpus.length / 2 && unknown > 0, `${counted} with counts, ${unknown} without`);
  });
});
