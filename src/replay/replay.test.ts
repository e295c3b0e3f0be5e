import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BreakerEvent, ProposedToolCall } from '../breaker/breaker-event.ts';
import { replayTrajectory } from './replay.ts';
import type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';
import type { Trajectory, TrajectoryStep } from './trajectory.ts';

const ALLOW: ReplayDecision = { action: 'allow' };

/** Records every call and answers from a script keyed by what it is asked. */
class ScriptedBreaker implements ReplayableBreaker {
  readonly calls: string[] = [];
  readonly #onTool: (call: ProposedToolCall) => ReplayDecision;
  readonly #onObserve: (event: BreakerEvent) => ReplayDecision;
  readonly #onModel: (nth: number) => ReplayDecision;
  #models = 0;

  constructor(script: {
    onTool?: (call: ProposedToolCall) => ReplayDecision;
    onObserve?: (event: BreakerEvent) => ReplayDecision;
    onModel?: (nth: number) => ReplayDecision;
  }) {
    this.#onTool = script.onTool ?? (() => ALLOW);
    this.#onObserve = script.onObserve ?? (() => ALLOW);
    this.#onModel = script.onModel ?? (() => ALLOW);
  }

  async checkModelCall(sessionId: string): Promise<ReplayDecision> {
    this.calls.push(`${sessionId}:checkModelCall`);
    return this.#onModel(this.#models++);
  }

  async checkToolCall(sessionId: string, call: ProposedToolCall): Promise<ReplayDecision> {
    this.calls.push(`${sessionId}:checkToolCall:${call.tool}:${JSON.stringify(call.args)}`);
    return this.#onTool(call);
  }

  async observe(sessionId: string, event: BreakerEvent): Promise<ReplayDecision> {
    this.calls.push(`${sessionId}:observe:${event.kind}`);
    return this.#onObserve(event);
  }
}

const model = (prompt: number | null, completion: number | null): TrajectoryStep => ({
  kind: 'model',
  prompt_tokens: prompt,
  completion_tokens: completion,
  text: '',
});
const tool = (name: string, args: Record<string, unknown> | string = {}): TrajectoryStep => ({
  kind: 'tool_call',
  tool: name,
  args,
  result: 'ok',
});

const trajectory: Trajectory = {
  id: 't1',
  steps: [
    { kind: 'user', text: 'go' }, // 0
    model(100, 10), // 1
    tool('search', { q: 'a' }), // 2
    model(200, 20), // 3
    tool('search', 'raw text args'), // 4
    { kind: 'retrieval', query: 'q', results: ['d'] }, // 5
    { kind: 'delegation', agent: 'sub', input: 'i', output: 'o' }, // 6
    model(400, 40), // 7
  ],
};

describe('replayTrajectory', () => {
  test('drives the breaker step by step as a live agent would, and reports no trip when all is allowed', async () => {
    const breaker = new ScriptedBreaker({});
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.deepEqual(breaker.calls, [
      's:observe:user',
      's:checkModelCall',
      's:observe:model',
      's:checkToolCall:search:{"q":"a"}',
      's:observe:tool_call',
      's:checkModelCall',
      's:observe:model',
      's:checkToolCall:search:"raw text args"',
      's:observe:tool_call',
      's:observe:retrieval',
      's:observe:delegation',
      's:checkModelCall',
      's:observe:model',
    ]);
    assert.deepEqual(result.output, {
      id: 't1',
      tripped: false,
      steps_total: 8,
      tokens_total: 770,
      tokens_after_steer: 0,
      tokens_after_trip: 0,
    });
    assert.deepEqual(Object.keys(result.output), ['id', 'tripped', 'steps_total', 'tokens_total', 'tokens_after_steer', 'tokens_after_trip']);
    assert.equal(result.tokensKnown, true);
  });

  test('a blocked tool call is the first intervention: it is not observed, the run goes on, nothing is saved without a stop', async () => {
    const breaker = new ScriptedBreaker({
      onTool: (call) => (typeof call.args === 'string' ? { action: 'block', category: 'tool_spiral', message: 'same search again' } : ALLOW),
    });
    const result = await replayTrajectory(breaker, trajectory, 's');
    const blocked = breaker.calls.indexOf('s:checkToolCall:search:"raw text args"');
    assert.equal(breaker.calls[blocked + 1], 's:observe:retrieval', 'the blocked call was not observed; the run went on');
    assert.equal(breaker.calls.at(-1), 's:observe:model');
    assert.deepEqual(result.output, {
      id: 't1',
      tripped: true,
      category: 'tool_spiral',
      step: 4,
      action: 'block',
      reason: 'same search again',
      steps_total: 8,
      tokens_total: 770,
      tokens_after_steer: 0,
      tokens_after_trip: 0,
    });
    assert.equal(result.decision?.action, 'block');
    assert.equal(result.stop, undefined);
  });

  test('a steer and a later stop are reported apart; tokens saved count from the stop only', async () => {
    const breaker = new ScriptedBreaker({
      onObserve: (event) => (event.kind === 'tool_call' ? { action: 'steer', category: 'tool_spiral', message: 'try another query' } : ALLOW),
      onModel: (nth) => (nth === 2 ? { action: 'stop', category: 'tool_spiral', message: 'stopped' } : ALLOW),
    });
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.deepEqual(result.output, {
      id: 't1',
      tripped: true,
      category: 'tool_spiral',
      step: 3,
      action: 'steer',
      reason: 'try another query',
      steer_step: 3,
      stop_step: 7,
      stop_category: 'tool_spiral',
      steps_total: 8,
      tokens_total: 770,
      tokens_after_steer: 660,
      tokens_after_trip: 440,
    });
    assert.equal(breaker.calls.at(-1), 's:checkModelCall', 'nothing after the stop is replayed');
  });

  test('a gated model call is the trip step', async () => {
    const breaker = new ScriptedBreaker({ onModel: (nth) => (nth === 1 ? { action: 'stop', category: 'budget' } : ALLOW) });
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.equal(result.output.step, 3);
    assert.equal(result.output.category, 'budget');
    assert.equal(result.output.tokens_after_trip, 660);
    assert.equal(result.output.reason, 'stop (budget)');
  });

  test('a decision on observing a step names the step after it', async () => {
    const breaker = new ScriptedBreaker({
      onObserve: (event) => (event.kind === 'retrieval' ? { action: 'steer', category: 'rag_fixation', evidence: { similarity: 0.9 } } : ALLOW),
    });
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.equal(result.output.step, 6);
    assert.equal(result.output.category, 'rag_fixation');
    assert.equal(result.output.reason, 'steer: {"similarity":0.9}');
    assert.equal(result.output.steer_step, 6);
    assert.equal(result.output.tokens_after_steer, 440);
    assert.equal(result.output.tokens_after_trip, 0, 'a steer saves nothing: the agent goes on');
    assert.equal(breaker.calls.at(-1), 's:observe:model');
  });

  test('an intervention after the last step names steps_total and saves nothing', async () => {
    const breaker = new ScriptedBreaker({
      onObserve: (event) => (event.kind === 'model' && event.promptTokens === 400 ? { action: 'stop', category: 'token_drift', message: 'drift' } : ALLOW),
    });
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.equal(result.output.tripped, true);
    assert.equal(result.output.step, 8);
    assert.equal(result.output.tokens_after_trip, 0);
  });

  test('keeps every intervention in order, each with its step and whether an observed step decided it; the verdict stays the first', async () => {
    let toolChecks = 0;
    const breaker = new ScriptedBreaker({
      onTool: () => (++toolChecks === 1 ? { action: 'steer', category: 'tool_spiral' } : { action: 'block', category: 'error_loop' }),
      onObserve: (event) => (event.kind === 'retrieval' ? { action: 'steer', category: 'rag_fixation' } : ALLOW),
      onModel: (nth) => (nth === 2 ? { action: 'stop', category: 'error_loop' } : ALLOW),
    });
    const result = await replayTrajectory(breaker, trajectory, 's');
    assert.deepEqual(
      result.interventions.map((x) => [x.step, x.observed, x.decision.action, x.decision.category]),
      [
        [2, false, 'steer', 'tool_spiral'],
        [4, false, 'block', 'error_loop'],
        [6, true, 'steer', 'rag_fixation'],
        [7, false, 'stop', 'error_loop'],
      ],
    );
    assert.equal(result.decision?.category, 'tool_spiral');
    assert.equal(result.stop?.category, 'error_loop');
    assert.deepEqual(result.output, {
      id: 't1',
      tripped: true,
      category: 'tool_spiral',
      step: 2,
      action: 'steer',
      reason: 'steer (tool_spiral)',
      steer_step: 2,
      stop_step: 7,
      stop_category: 'error_loop',
      steps_total: 8,
      tokens_total: 770,
      tokens_after_steer: 660,
      tokens_after_trip: 440,
    });
    assert.deepEqual((await replayTrajectory(new ScriptedBreaker({}), trajectory, 's')).interventions, []);
  });

  test('unknown token counts total 0 and are flagged as unknown', async () => {
    const result = await replayTrajectory(new ScriptedBreaker({}), { id: 'n', steps: [model(null, null), model(null, null)] }, 's');
    assert.equal(result.output.tokens_total, 0);
    assert.equal(result.tokensKnown, false);
  });
});

test('the reason is the evidence detail when the breaker gives one', async () => {
  const breaker = new ScriptedBreaker({
    onTool: () => ({
      action: 'steer',
      category: 'tool_spiral',
      message: 'Try another query.',
      evidence: { detail: 'search called 3 times with the same query' },
    }),
  });
  const result = await replayTrajectory(breaker, trajectory, 's');
  assert.equal(result.output.reason, 'search called 3 times with the same query');
});
