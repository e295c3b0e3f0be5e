import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import { InMemoryBreakerStore } from '../breaker/in-memory-breaker-store.ts';
import { ProxyJudge } from './proxy-judge.ts';
import { responsesWire } from './responses-wire.ts';
import type { JsonObject, WireRound } from './wire-api.ts';

const MARK = 'BULKY-ARGUMENTS';
const ARGS = { to: 'Oslo', query: `${MARK}${'z'.repeat(50_000)}` };
const RESULT = 'No flights found.';

/** Answer `n`, which calls search with {@link ARGS}. */
function answer(n: number): WireRound {
  return { responseId: `resp_${n}`, text: '', promptTokens: 100, completionTokens: 20, toolCalls: [{ id: `call_${n}`, name: 'search', args: ARGS }] };
}

/** The output of answer `n`'s call. */
function output(n: number): JsonObject {
  return { type: 'function_call_output', call_id: `call_${n}`, output: RESULT };
}

type Outcome = 'pass' | 'block' | 'stop';

describe('ProxyJudge: the calls of the latest Responses answer, for the request that brings their outputs', () => {
  test('are remembered as prints, not arguments: a continued request and a whole input get the print', async () => {
    const breaker = new AgentBreaker({ store: new InMemoryBreakerStore() });
    const judge = new ProxyJudge(breaker);
    assert.deepEqual(await judge.judgeRound('s', answer(1)), { blocked: new Map() });
    const print = breaker.printToolCall({ tool: 'search', args: ARGS });

    const continued = await judge.requestTail(responsesWire, { previous_response_id: 'resp_1', input: [output(1)] }, 's', 'resp_1');
    // The whole input holds the call again, arguments and all: its output is still matched to the call remembered.
    const call = { type: 'function_call', call_id: 'call_1', name: 'search', arguments: JSON.stringify(ARGS) };
    const whole = await judge.requestTail(responsesWire, { input: [{ role: 'user', content: 'Find me a flight.' }, call, output(1)] }, 's', undefined);
    for (const tail of [continued, whole]) {
      assert.equal(tail.unmatched, undefined);
      assert.deepEqual(tail.toolResults, [{ id: 'call_1', name: 'search', args: undefined, print, result: RESULT, error: false }]);
    }
    assert.ok(!JSON.stringify(continued).includes(MARK));
  });

  test('outputs observed by the remembered print are judged as by a breaker given the arguments', async () => {
    const ended = (outcomes: Outcome[]): boolean => outcomes.at(-1) === 'block' || outcomes.at(-1) === 'stop';
    const rounds = 10;
    const viaJudge: Outcome[] = [];
    const judge = new ProxyJudge(new AgentBreaker({ store: new InMemoryBreakerStore() }));
    for (let n = 1; n <= rounds && !ended(viaJudge); n++) {
      const previous = n === 1 ? undefined : `resp_${n - 1}`;
      const body = n === 1 ? { input: 'Find me a flight.' } : { previous_response_id: previous, input: [output(n - 1)] };
      assert.equal((await judge.gate('s')).stop, undefined);
      const observed = await judge.observeRequest('s', await judge.requestTail(responsesWire, body, 's', previous));
      if (observed.stop !== undefined) viaJudge.push('stop');
      else {
        const verdict = await judge.judgeRound('s', answer(n), observed);
        viaJudge.push(verdict.stop !== undefined ? 'stop' : verdict.blocked.size > 0 ? 'block' : 'pass');
      }
    }

    const withArgs: Outcome[] = [];
    const breaker = new AgentBreaker({ store: new InMemoryBreakerStore() });
    for (let n = 1; n <= rounds && !ended(withArgs); n++) {
      assert.notEqual((await breaker.checkModelCall('s')).action, 'stop');
      const event =
        n === 1 ? ({ kind: 'user', text: 'Find me a flight.' } as const) : ({ kind: 'tool_call', tool: 'search', args: ARGS, result: RESULT } as const);
      if ((await breaker.observe('s', event, { surfaced: true })).action === 'stop') withArgs.push('stop');
      else {
        await breaker.observe('s', { kind: 'model', promptTokens: 100, completionTokens: 20, text: '' }, { surfaced: true });
        const checked = await breaker.checkToolCall('s', { tool: 'search', args: ARGS });
        withArgs.push(checked.action === 'stop' ? 'stop' : checked.action === 'block' ? 'block' : 'pass');
      }
    }
    // The repeated call is caught only when each output is recorded as that call's.
    assert.equal(viaJudge.at(-1), 'block');
    assert.deepEqual(viaJudge, withArgs);
    const [a, b] = [await judge.breaker.snapshot('s'), await breaker.snapshot('s')];
    assert.deepEqual([a.counters, a.escalations], [b.counters, b.escalations]);
  });
});
