/**
 * The Agents SDK door with a run's state saved as text and restored
 * (`result.state.toString()`, `RunState.fromString`), as a run waiting for a
 * person is across requests or processes: each request here builds its own
 * door and agent over the one breaker, as a new process would over a shared
 * store. The SDK's own OpenAI provider in Chat Completions mode, over real
 * HTTP against the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent, MemorySession, OpenAIProvider, RunState, tool } from '@openai/agents';
import { z } from 'zod';
import { AgentBreaker, type AgentBreakerError, BreakerOpenError, ToolSpiralError, type BreakerEventRecord } from '../index.ts';
import { breakerForOpenAIAgents, type GovernedRunStop } from './index.ts';
import { ScriptedModelServer } from '../testing/index.ts';
import { escalations } from '../e2e/recorded-run.ts';
import { restartServiceTool } from './test-support/restart-tool.ts';

/** A service whose every request builds its own door and agent over one breaker. */
function service(server: ScriptedModelServer, useResponses = false) {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  // The session of every model turn, in order.
  const turns: string[] = [];
  const checkModelCall = breaker.checkModelCall.bind(breaker);
  breaker.checkModelCall = (sessionId) => {
    turns.push(sessionId);
    return checkModelCall(sessionId);
  };
  const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses });
  // One tool for every request: each door governs a copy of it, and its runs are counted across requests.
  const { restart, runs: restarts } = restartServiceTool();
  let checks = 0;
  const request = (sessionId?: string) => {
    const door = breakerForOpenAIAgents(breaker, { runConfig: { modelProvider, tracingDisabled: true }, ...(sessionId ? { sessionId } : {}) });
    const check = tool({
      name: 'check_build',
      description: 'Status of a CI build',
      parameters: z.object({ buildId: z.string() }),
      execute: async ({ buildId }) => {
        checks += 1;
        return `build ${buildId}: running`;
      },
    });
    const agent = new Agent({ name: 'ops', model: server.modelId, tools: door.tools([restart, check]) });
    return { door, agent };
  };
  /** The sessions model turns ran in, in order of first appearance. */
  const sessions = (): string[] => [...new Set(turns)];
  return { breaker, events, request, sessions, restarts, checks: () => checks };
}

/** A model that asks to restart the api every turn. */
function restartingModel(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'restart_service', arguments: { service: 'api' } }] }], onExhausted: 'repeat-last' }).start();
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

/** Approves every interruption of a saved state in a new request, resumes it, and saves what it paused with. */
async function approveAndResume(request: ReturnType<typeof service>['request'], saved: string, sessionId?: string): Promise<string> {
  const { door, agent } = request(sessionId);
  const state = await RunState.fromString(agent, saved);
  for (const item of state.getInterruptions()) state.approve(item);
  const result = await door.run(agent, state, { maxTurns: 50 });
  assert.ok(result.interruptions.length > 0, 'the run paused again');
  return result.state.toString();
}

/**
 * The saved state's text with what the door recorded of its session replaced
 * (undefined: taken out, as a door that did not record it saved it).
 */
function withRecordedSession(saved: string, record: unknown): string {
  type Saved = { providerData?: Record<string, unknown> };
  const json = JSON.parse(saved) as { modelResponses: Saved[]; lastModelResponse?: Saved };
  for (const response of [...json.modelResponses, json.lastModelResponse]) {
    if (response === undefined) continue;
    response.providerData = { ...response.providerData, agentGovernor: record };
    if (record === undefined) delete response.providerData['agentGovernor'];
  }
  return JSON.stringify(json);
}

describe('breakerForOpenAIAgents: a run restored from its saved state', () => {
  test('approved and resumed in a new request each time, it goes on in the same session: the loop across approvals is stopped', async () => {
    await using server = await restartingModel();
    const { events, request, sessions, restarts } = service(server);
    const first = request();
    let saved = (await first.door.run(first.agent, 'The api is down, fix it.', { maxTurns: 50 })).state.toString();

    let approvals = 0;
    const error = await rejection(
      (async () => {
        for (; approvals < 8; approvals += 1) saved = await approveAndResume(request, saved);
      })(),
    );

    assert.ok(ToolSpiralError.isInstance(error), `expected ToolSpiralError, got ${String(error)}`);
    assert.deepEqual(escalations(events), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop']);
    assert.equal(sessions().length, 1, 'one session from the first request to the stop');
    assert.equal(restarts(), 3, 'the blocked and the stopped restart did not run');
    assert.ok(approvals < 8);
  });

  test('two runs paused side by side, resumed in turn, each go on in a session of their own', async () => {
    await using server = await restartingModel();
    const { events, request, sessions } = service(server);
    const start = async () => {
      const { door, agent } = request();
      return (await door.run(agent, 'The api is down, fix it.', { maxTurns: 50 })).state.toString();
    };
    const saved = [await start(), await start()];
    const stops: unknown[] = [];
    for (let round = 0; round < 8 && stops.length < 2; round += 1) {
      for (const run of [0, 1]) {
        if (stops[run] !== undefined) continue;
        try {
          saved[run] = await approveAndResume(request, saved[run]!);
        } catch (error) {
          stops[run] = error;
        }
      }
    }

    assert.equal(stops.length, 2, 'both runs were stopped');
    const [a, b] = stops as AgentBreakerError[];
    assert.ok(ToolSpiralError.isInstance(a) && ToolSpiralError.isInstance(b), `expected two ToolSpiralErrors, got ${String(a)}, ${String(b)}`);
    assert.notEqual(a.sessionId, b.sessionId);
    assert.deepEqual(sessions().sort(), [a.sessionId, b.sessionId].sort());
    for (const id of [a.sessionId, b.sessionId]) {
      const own = events.filter((e) => e.sessionId === id);
      assert.deepEqual(escalations(own), ['tool_spiral:steer', 'tool_spiral:block', 'tool_spiral:stop'], 'each run stopped on its own calls alone');
    }
  });

  test('a door given a sessionId keeps its own: a restored run goes on in it', async () => {
    await using server = await restartingModel();
    const { breaker, request } = service(server);
    const first = request();
    const paused = await first.door.run(first.agent, 'The api is down, fix it.', { maxTurns: 50 });
    const saved = await approveAndResume(request, paused.state.toString(), 'oa-restored-explicit');

    assert.equal((await breaker.snapshot('oa-restored-explicit')).counters.modelCalls, 1, 'the resumed turn counted in the given session');
    // From there on the run is in that session, also for a door not given one.
    await approveAndResume(request, saved);
    assert.equal((await breaker.snapshot('oa-restored-explicit')).counters.modelCalls, 2);
  });

  for (const useResponses of [false, true]) {
    test(`what the saved state records is the session id alone, where the model is never sent it (${useResponses ? 'Responses API' : 'Chat Completions'})`, async () => {
      await using server = await restartingModel();
      const { request, sessions } = service(server, useResponses);
      const { door, agent } = request();
      const paused = await door.run(agent, 'The api is down, fix it.', { maxTurns: 50 });
      const saved = paused.state.toString();
      const [sessionId] = sessions();

      type Saved = { providerData?: Record<string, unknown> };
      const json = JSON.parse(saved) as { modelResponses: Saved[]; lastModelResponse: Saved };
      const responses = [...json.modelResponses, json.lastModelResponse];
      for (const response of responses) assert.deepEqual(response.providerData?.['agentGovernor'], { sessionId });
      assert.equal(saved.split('agentGovernor').length - 1, responses.length, 'in its responses, nowhere else');
      assert.doesNotMatch(saved, /test-key/);
      assert.equal(paused.rawResponses.at(-1)?.providerData?.['agentGovernor'], undefined, "the run's own responses are left as they are");

      await approveAndResume(request, saved);
      for (const r of server.requests) assert.doesNotMatch(JSON.stringify(r.body), /agentGovernor/, 'the model is never sent it');
      assert.equal(sessions().length, 1);
    });
  }

  test("a state saved without the door's record resumes in the session its run options name, else in a new one", async () => {
    await using server = await restartingModel();
    const { breaker, request, sessions } = service(server);
    const first = request();
    const session = new MemorySession({ sessionId: 'oa-restored-legacy' });
    const paused = await first.door.run(first.agent, 'The api is down, fix it.', { maxTurns: 50, session });
    const saved = withRecordedSession(paused.state.toString(), undefined);

    const { door, agent } = request();
    const state = await RunState.fromString(agent, saved);
    for (const item of state.getInterruptions()) state.approve(item);
    await door.run(agent, state, { maxTurns: 50, session });
    assert.equal((await breaker.snapshot('oa-restored-legacy')).counters.modelCalls, 2, 'the run options name the session');

    await approveAndResume(request, saved);
    await approveAndResume(request, withRecordedSession(saved, { sessionId: 42 }));
    assert.deepEqual(sessions().slice(0, 1), ['oa-restored-legacy']);
    assert.equal(sessions().length, 3, 'each without a name went on in a session of its own');
  });
});

describe('breakerForOpenAIAgents: a stopped run restored from its saved state', () => {
  /** The model checks the build until stopped; asked again, it answers. */
  function checkingModel(): Promise<ScriptedModelServer> {
    return new ScriptedModelServer({
      script: (_request, index) => (index < 5 ? { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] } : { text: 'b-17 is still running.' }),
    }).start();
  }

  for (const stream of [false, true]) {
    test(`is refused as stopped, in the session it stopped in, until that session is reset (${stream ? 'streamed' : 'not streamed'})`, async () => {
      await using server = await checkingModel();
      const { breaker, request, checks } = service(server);
      const first = request();
      const stop = await rejection(
        (async () => {
          if (!stream) return first.door.run(first.agent, 'Is build b-17 done?', { maxTurns: 30 });
          for await (const _event of await first.door.run(first.agent, 'Is build b-17 done?', { maxTurns: 30, stream: true })) {
            // drained only to drive the run
          }
        })(),
      );
      assert.ok(ToolSpiralError.isInstance(stop), `expected ToolSpiralError, got ${String(stop)}`);
      const saved = (stop as GovernedRunStop).state?.toString();
      assert.ok(saved !== undefined, 'the stop carries a state');
      const sent = server.requests.length;

      const { door, agent } = request();
      const refused = await rejection(door.run(agent, await RunState.fromString(agent, saved), { maxTurns: 30 }));
      assert.ok(BreakerOpenError.isInstance(refused), `expected BreakerOpenError, got ${String(refused)}`);
      assert.equal(refused.sessionId, stop.sessionId);
      assert.equal(server.requests.length, sent, 'the model was not asked again');
      assert.equal(checks(), 3);

      await breaker.reset(stop.sessionId!);
      const before = (await breaker.snapshot(stop.sessionId!)).counters.modelCalls;
      const again = request();
      const resumed = await again.door.run(again.agent, await RunState.fromString(again.agent, saved), { maxTurns: 30 });
      assert.equal(resumed.finalOutput, 'b-17 is still running.');
      assert.equal((await breaker.snapshot(stop.sessionId!)).counters.modelCalls, before + 1, 'the resumed turn counted in the session it stopped in');
    });
  }
});
