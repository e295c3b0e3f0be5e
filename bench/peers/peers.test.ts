import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayTrajectory } from '../../src/replay/replay.ts';
import type { ReplayableBreaker } from '../../src/replay/replayable-breaker.ts';
import type { TrajectoryStep } from '../../src/replay/trajectory.ts';
import { GeminiCliLoopDetection } from './gemini-cli.ts';
import { OpenHandsStuckDetector } from './openhands.ts';
import { RooCodeToolRepetition } from './roo-code.ts';
import { SeedSpringAgentBreaker } from './seed-spring-agent-breaker.ts';
import { StepCap } from './step-cap.ts';

const model = (text = ''): TrajectoryStep => ({ kind: 'model', prompt_tokens: null, completion_tokens: null, text });
const call = (tool: string, args: Record<string, unknown> | string, result = 'same', error = false): TrajectoryStep => ({
  kind: 'tool_call',
  tool,
  args,
  result,
  error,
});
const user = (text: string): TrajectoryStep => ({ kind: 'user', text });

/** `n` rounds of: model step, then the tool call `make(i)`. */
function rounds(n: number, make: (i: number) => TrajectoryStep): TrajectoryStep[] {
  return Array.from({ length: n }, (_, i) => [model(), make(i)]).flat();
}

async function tripStep(detector: ReplayableBreaker, steps: TrajectoryStep[]): Promise<number | undefined> {
  return (await replayTrajectory(detector, { id: 't', steps }, 's')).output.step;
}

describe('Gemini CLI loop detection', () => {
  test('stops the 5th identical call before it runs', async () => {
    assert.equal(
      await tripStep(
        new GeminiCliLoopDetection(),
        rounds(6, () => call('read', { p: 'a' })),
      ),
      9,
    );
  });
  test('a new user prompt starts the count again; different arguments are not repeats', async () => {
    const steps = [...rounds(4, () => call('read', { p: 'a' })), user('go on'), ...rounds(4, () => call('read', { p: 'a' }))];
    assert.equal(await tripStep(new GeminiCliLoopDetection(), steps), undefined);
    assert.equal(
      await tripStep(
        new GeminiCliLoopDetection(),
        rounds(8, (i) => call('read', { p: i })),
      ),
      undefined,
    );
  });
  test('stops on chanting text', async () => {
    const chant = 'I will now check the configuration file again to be sure. '.repeat(12);
    assert.equal(await tripStep(new GeminiCliLoopDetection(), [model(chant), model('done')]), 1);
  });
});

describe('OpenHands StuckDetector', () => {
  test('4 identical action/observation pairs stop the next step', async () => {
    assert.equal(
      await tripStep(
        new OpenHandsStuckDetector(),
        rounds(6, () => call('ls', '.')),
      ),
      8,
    );
  });
  test('3 identical failing actions stop once 4 actions exist', async () => {
    const steps = [model(), call('cat', 'x', 'ok'), ...rounds(4, (i) => call('run', 'make', `boom ${i}`, true))];
    assert.equal(await tripStep(new OpenHandsStuckDetector(), steps), 8);
  });
  test('A-B-A-B-A-B with the same observations stops', async () => {
    const steps = rounds(8, (i) => (i % 2 === 0 ? call('open', 'a.py', 'A') : call('open', 'b.py', 'B')));
    assert.equal(await tripStep(new OpenHandsStuckDetector(), steps), 12);
  });
  test('the same command with new output each time is not stuck', async () => {
    assert.equal(
      await tripStep(
        new OpenHandsStuckDetector(),
        rounds(8, (i) => call('poll', 'status', `t=${i}`)),
      ),
      undefined,
    );
  });
});

describe('Roo Code repetition limit', () => {
  test('blocks the 4th identical consecutive call, whatever the model says in between', async () => {
    assert.equal(
      await tripStep(
        new RooCodeToolRepetition(3),
        rounds(5, () => call('read_file', { path: 'a', b: 1 })),
      ),
      7,
    );
    assert.equal(
      await tripStep(
        new RooCodeToolRepetition(3),
        rounds(3, () => call('read_file', { path: 'a' })),
      ),
      undefined,
    );
  });
  test('compares parameters with sorted names', async () => {
    const steps = rounds(4, (i) => call('read_file', i % 2 === 0 ? { a: 1, b: 2 } : { b: 2, a: 1 }));
    assert.equal(await tripStep(new RooCodeToolRepetition(3), steps), 7);
  });
});

describe('Seed SpringAgentBreaker', () => {
  test('5 similar calls of one tool trip after the 5th has run', async () => {
    const phrasing = ['spring boot benchmark results 2026', 'benchmark results spring boot 2026'];
    assert.equal(
      await tripStep(
        new SeedSpringAgentBreaker(),
        rounds(6, (i) => call('search', { q: phrasing[i % 2] })),
      ),
      10,
    );
    const different = rounds(6, (i) => call('search', { q: `spring boot benchmark ${i}` }));
    assert.equal(await tripStep(new SeedSpringAgentBreaker(), different), undefined);
  });
  test('its ASCII-only normaliser sees every Japanese query as the same', async () => {
    const queries = ['東京の天気', '大阪の人口', '京都の寺', '札幌の雪', '福岡の食べ物', '那覇の海'];
    assert.equal(
      await tripStep(
        new SeedSpringAgentBreaker(),
        rounds(6, (i) => call('search', { q: queries[i] })),
      ),
      10,
    );
  });
});

describe('Step cap', () => {
  test('refuses the model call after the cap', async () => {
    assert.equal(
      await tripStep(
        new StepCap(3),
        rounds(5, (i) => call('t', { i })),
      ),
      6,
    );
    assert.equal(
      await tripStep(
        new StepCap(3),
        rounds(3, (i) => call('t', { i })),
      ),
      undefined,
    );
  });
});
