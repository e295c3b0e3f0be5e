import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { AgentBreaker, InMemoryBreakerStore, type AgentBreakerOptions, type BreakerEvent } from './index.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { encodeState } from './state-codec.ts';
import { ALL_DETECTORS } from './test-support/replay-corpus.ts';
import { parseTrajectoryLine } from '../replay/parse-trajectory.ts';
import { replayTrajectory } from '../replay/replay.ts';
import type { ReplayableBreaker } from '../replay/replayable-breaker.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The sub-agents of bench/corpus/multi-agent.jsonl called as tools, so that sub-agent calls are printed too. */
const subAgentTools = ['code_reviewer', 'research_agent', 'web_researcher', 'incident_agent', 'data_agent', 'sql_analyst'];

/** Observes every tool call by the print another breaker (another replica, with the same options) made of it. */
function observingByPrint(breaker: AgentBreaker, printer: AgentBreaker): ReplayableBreaker {
  return {
    checkModelCall: (id) => breaker.checkModelCall(id),
    checkToolCall: (id, call) => breaker.checkToolCall(id, call),
    observe: (id, event) => {
      if (event.kind !== 'tool_call') return breaker.observe(id, event);
      const { args, ...rest } = event;
      return breaker.observe(id, { ...rest, print: printer.printToolCall({ tool: event.tool, args }) });
    },
  };
}

describe('AgentBreaker.printToolCall', () => {
  test('a tool call observed by its print is judged exactly as with its arguments, over every trajectory of bench/corpus', async () => {
    const options: AgentBreakerOptions = { ...ALL_DETECTORS, delegation: { enabled: true, subAgentTools }, now: () => 1_700_000_000_000 };
    const dir = path.join(repoRoot, 'bench/corpus');
    const plainStore = new InMemoryBreakerStore({ maxSessions: 100_000 });
    const printedStore = new InMemoryBreakerStore({ maxSessions: 100_000 });
    const plain = new AgentBreaker({ ...options, store: plainStore });
    const printed = observingByPrint(new AgentBreaker({ ...options, store: printedStore }), new AgentBreaker(options));
    let trajectories = 0;
    let tripped = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
      const lines = readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '');
      for (const [i, line] of lines.entries()) {
        const trajectory = parseTrajectoryLine(line);
        const id = `${file}-${i}`;
        const expected = await replayTrajectory(plain, trajectory, id);
        const actual = await replayTrajectory(printed, trajectory, id);
        assert.deepEqual(actual.output, expected.output, id);
        const [a, b] = [await plainStore.read(id), await printedStore.read(id)];
        assert.equal(encodeState(b!.state), encodeState(a!.state), id);
        trajectories++;
        if (expected.output.tripped) tripped++;
      }
    }
    // The corpus has loops of every kind: the equality above covers trips, not only quiet runs.
    assert.ok(trajectories > 500 && tripped > 100, `${trajectories} trajectories, ${tripped} tripped`);
  });

  test('a print keeps no argument text, and stays small whatever the arguments', () => {
    const breaker = new AgentBreaker();
    const secret = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
    const content = 'lorem ipsum dolor sit amet '.repeat(300);
    const print = breaker.printToolCall({ tool: 'write_file', args: { path: 'notes/plan.md', content, token: secret } });
    assert.ok(!print.includes(secret) && !print.includes('lorem') && !print.includes('plan.md'), print);
    assert.ok(print.length < 400, `${print.length} characters for ${content.length} of arguments`);
    // The same call, the same print: replicas agree on what they judge.
    assert.equal(new AgentBreaker().printToolCall({ tool: 'write_file', args: JSON.stringify({ path: 'notes/plan.md', content, token: secret }) }), print);
  });

  test('bad prints are refused with a typed error that names event.print, and nothing is recorded', async () => {
    const breaker = new AgentBreaker({ delegation: { enabled: true, subAgentTools: ['researcher'] } });
    const print = breaker.printToolCall({ tool: 'search', args: { q: 'Oslo' } });
    const refused = async (event: BreakerEvent, problem: RegExp) => {
      await assert.rejects(
        breaker.observe('s', event),
        (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'event.print' && problem.test(e.message),
      );
    };
    await refused({ kind: 'tool_call', tool: 'search', args: { q: 'Oslo' }, print, result: 'ok' }, /args or print, not both/);
    await refused({ kind: 'tool_call', tool: 'search', print: 'not a print', result: 'ok' }, /not a tool call print/);
    await refused({ kind: 'tool_call', tool: 'search', print: 42 as unknown as string, result: 'ok' }, /must be a string/);
    await refused({ kind: 'tool_call', tool: 'fetch', print, result: 'ok' }, /another tool than "fetch"/);
    // A print must be a tool call's: an observation logged by a store is not one.
    await refused({ kind: 'tool_call', tool: 'search', print: '{"k":"model","at":0}', result: 'ok' }, /not a tool call print/);
    // A breaker that does not take the tool for a sub-agent printed no task: this one could not judge the call as a sub-agent's.
    const foreign = new AgentBreaker().printToolCall({ tool: 'researcher', args: { task: 'find flights' } });
    await refused({ kind: 'tool_call', tool: 'researcher', print: foreign, result: 'done' }, /same delegation.subAgentTools/);
    assert.equal((await breaker.snapshot('s')).counters.toolCalls, 0);
    // `args: null` leaves the arguments out, as JSON does: the print stands for them, and the call is judged as with them.
    const withNull: string[] = [];
    const withArgs: string[] = [];
    for (let i = 0; i < 3; i++) {
      withNull.push((await breaker.observe('n', { kind: 'tool_call', tool: 'search', args: null, print, result: 'ok' })).action);
      withArgs.push((await breaker.observe('a', { kind: 'tool_call', tool: 'search', args: { q: 'Oslo' }, result: 'ok' })).action);
    }
    assert.deepEqual(withNull, ['allow', 'allow', 'steer']);
    assert.deepEqual(withNull, withArgs);
    assert.equal((await breaker.snapshot('n')).counters.toolCalls, 3);
    assert.throws(
      () => breaker.printToolCall({ tool: '', args: {} }),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'call.tool',
    );
  });
});
