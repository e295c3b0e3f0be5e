import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  AdvisorOrder,
  AdvisorPlacementError,
  AgentBreaker,
  AgentLoop,
  BreakerRecoveryAdvisor,
  ChatClient,
  CONVERSATION_ID,
  InvalidOptionError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  submitTool,
  ToolCallAdvisor,
  ToolCallingAdvisor,
  ToolSpiralError,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel, type RecordedRequest } from '../testing/index.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import type { AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/** Loops on the same status check until its prompt carries a recovery summary; then answers. */
function loopingModel(recoverable: boolean): MockLanguageModelV4 {
  let n = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      n += 1;
      const prompt = JSON.stringify(options.prompt);
      if (recoverable && prompt.includes('Summary of the earlier attempt')) {
        return {
          content: [{ type: 'text', text: 'Job 7 keeps failing; I stopped polling and reported it.' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'status', input: '{"job":"7"}' }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

const status = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'job 7: FAILED (exit 1)' });

describe('BreakerRecoveryAdvisor', () => {
  test('a stop flushes memory, leaves a summary, resets the breaker and retries once', async () => {
    const breaker = new AgentBreaker();
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(loopingModel(true))
      .defaultAdvisors(new BreakerRecoveryAdvisor({ breaker, memory }), new MessageChatMemoryAdvisor({ memory }), new ToolCallAdvisor(), breaker)
      .defaultTools({ status })
      .build();
    const response = await client
      .prompt('Is job 7 done?')
      .advisors((a) => a.param(CONVERSATION_ID, 'r-1'))
      .call()
      .chatClientResponse();
    assert.equal(response.response.text, 'Job 7 keeps failing; I stopped polling and reported it.');
    const recovered = response.context.get('governor.breaker.recovered') as { category: string; message: string };
    assert.equal(recovered.category, 'tool_spiral');
    assert.match(recovered.message, /status/);
    const history = await memory.get('r-1');
    assert.equal(history[0]!.role, 'system');
    assert.match(String(history[0]!.content), /Summary of the earlier attempt.*tool_spiral/);
    // The looping turn was flushed: memory holds the summary and the retried turn only.
    assert.deepEqual(
      history.map((m) => m.role),
      ['system', 'user', 'assistant'],
    );
    assert.notEqual((await breaker.snapshot('r-1')).state, 'OPEN');
  });

  test('a second stop in the same call is thrown as the typed error', async () => {
    const breaker = new AgentBreaker();
    const client = ChatClient.builder(loopingModel(false))
      .defaultAdvisors(new BreakerRecoveryAdvisor({ breaker }), new ToolCallAdvisor(), breaker)
      .defaultTools({ status })
      .build();
    await assert.rejects(
      client
        .prompt('Is job 7 done?')
        .advisors((a) => a.param(CONVERSATION_ID, 'r-2'))
        .call()
        .content(),
      ToolSpiralError,
    );
  });
});

describe('BreakerRecoveryAdvisor placed inside what its retry must go through again', () => {
  test('inside the memory advisor, or inside the tool loop, the chain is refused when it is built, naming both', () => {
    const breaker = new AgentBreaker();
    const memory = new MessageWindowChatMemory();
    const inside = (order: number, withMemory: boolean) =>
      ChatClient.builder(loopingModel(true))
        .defaultAdvisors(
          new BreakerRecoveryAdvisor({ breaker, memory, order }),
          ...(withMemory ? [new MessageChatMemoryAdvisor({ memory })] : []),
          new ToolCallingAdvisor(),
          breaker,
        )
        .defaultTools({ status })
        .build();
    assert.throws(
      () => inside(AdvisorOrder.TOOL_LOOP - 1, true),
      (error: unknown) =>
        AdvisorPlacementError.isInstance(error) &&
        error.advisor === 'BreakerRecoveryAdvisor' &&
        error.toolLoop === 'MessageChatMemoryAdvisor' &&
        /the call it retries would not go through MessageChatMemoryAdvisor again/.test(error.message),
    );
    assert.throws(
      () => inside(0, false),
      (error: unknown) => AdvisorPlacementError.isInstance(error) && error.toolLoop === 'ToolCallingAdvisor',
    );
    // Its default order is outside both.
    assert.doesNotThrow(() => inside(AdvisorOrder.MEMORY - 1, true));
  });
});

describe('BreakerRecoveryAdvisor and a stop from another copy of the package', () => {
  test('a stop whose class comes from a second installed copy (another prototype) is recovered from too', async () => {
    // A second evaluation of the errors module stands for a second copy of the package, or a bundle of it.
    const copy = (await import(`./breaker-errors.ts?copy=${Date.now()}`)) as typeof import('./breaker-errors.ts');
    const stop = new copy.ToolSpiralError('Agent stopped: tool-call spiral — status called 4 times', undefined, 'r-3');
    assert.equal(stop instanceof ToolSpiralError, false);
    let thrown = false;
    const stopsOnce = {
      name: 'StopsOnce',
      order: 0,
      adviseCall: (request: ChatClientRequest, chain: AdvisorChain) => {
        if (thrown) return chain.nextCall(request);
        thrown = true;
        throw stop;
      },
    };
    const breaker = new AgentBreaker();
    const client = ChatClient.builder(loopingModel(true)).defaultAdvisors(new BreakerRecoveryAdvisor({ breaker }), stopsOnce).build();
    const text = await client
      .prompt('Is job 7 done?')
      .advisors((a) => a.param(CONVERSATION_ID, 'r-3'))
      .call()
      .content();
    assert.equal(text, 'Job 7 keeps failing; I stopped polling and reported it.');
  });
});

describe('BreakerRecoveryAdvisor over the scripted model, call and stream', () => {
  for (const mode of MODES) {
    test(`${mode}: recovers from a stop, and the retry's repeats are judged from scratch (baselines reset)`, async () => {
      // Loops on the same check until the prompt carries the recovery summary; then checks twice more and answers.
      const retried = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('Summary of the earlier attempt');
      await using server = await new ScriptedModelServer({
        script: (request) => {
          if (!retried(request)) return { toolCalls: [{ name: 'status', arguments: { job: '7' } }] };
          const checks = request.body.messages.filter((m) => m.role === 'tool').length;
          return checks < 2 ? { toolCalls: [{ name: 'status', arguments: { job: '7' } }] } : { text: 'Job 7 keeps failing; reported.' };
        },
      }).start();
      const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new BreakerRecoveryAdvisor({ breaker }), new ToolCallingAdvisor(), breaker)
        .defaultTools({ status })
        .build();
      const { text } = await runMode(
        client.prompt('Is job 7 done?').advisors((a) => a.param(CONVERSATION_ID, `rs-${mode}`)),
        mode,
      );
      assert.ok(text.endsWith('Job 7 keeps failing; reported.'), text);
      const retry = server.requests.filter(retried);
      assert.equal(retry.length, 3, "the retry ran the same check twice without tripping on the earlier attempt's evidence");
      const snapshot = await breaker.snapshot(`rs-${mode}`);
      assert.equal(snapshot.state, 'CLOSED');
      assert.ok(snapshot.budget.tokens > 0, 'the budget was kept');
    });
  }
});

describe('BreakerRecoveryAdvisor with a memory advisor: the summary left in memory reaches the retried round', () => {
  const advisors = {
    MessageChatMemoryAdvisor: (memory: MessageWindowChatMemory) => new MessageChatMemoryAdvisor({ memory }),
    PromptChatMemoryAdvisor: (memory: MessageWindowChatMemory) => new PromptChatMemoryAdvisor({ memory }),
  };
  const cases = Object.entries(advisors).flatMap(([name, make]) =>
    [undefined, 'Be terse.'].flatMap((system) => MODES.map((mode) => ({ name, make, system, mode }))),
  );
  for (const { name, make, system, mode } of cases) {
    test(`${name}, ${mode}, ${system === undefined ? 'no system prompt' : 'with a system prompt'}: turn 1's fact is flushed, the summary reaches the retry`, async () => {
      const summarized = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('Summary of the earlier attempt');
      // Greets; loops on one search until its prompt carries the summary; then answers.
      await using server = await new ScriptedModelServer({
        script: (request) => {
          if (summarized(request)) return { text: 'Searched for x another way: nothing found.' };
          if (JSON.stringify(request.body.messages).includes('Search x please')) return { toolCalls: [{ name: 'search', arguments: { query: 'x' } }] };
          return { text: 'Hello Ada.' };
        },
      }).start();
      const search = tool({ inputSchema: z.object({ query: z.string() }), execute: async () => 'no results for x' });
      const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
      const memory = new MessageWindowChatMemory();
      const conversation = `mem-${name}-${mode}-${system === undefined ? 'bare' : 'system'}`;
      const builder = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(new BreakerRecoveryAdvisor({ breaker, memory }), make(memory), new ToolCallingAdvisor(), breaker)
        .defaultTools({ search })
        .defaultAdvisorParams({ [CONVERSATION_ID]: conversation });
      const client = (system === undefined ? builder : builder.defaultSystem(system)).build();

      await runMode(client.prompt('My name is Ada'), mode);
      const { text } = await runMode(client.prompt('Search x please'), mode);

      assert.ok(text.endsWith('Searched for x another way: nothing found.'), text);
      const turn2 = server.requests.findIndex((r) => JSON.stringify(r.body.messages).includes('Search x please'));
      assert.match(JSON.stringify(server.requests[turn2]?.body.messages), /My name is Ada/, 'before the stop, turn 2 saw the fact of turn 1');
      const stopped = server.requests.findLastIndex((r) => r.body.messages.some((m) => m.role === 'tool'));
      const retry = server.requests[stopped + 1];
      assert.ok(retry !== undefined && summarized(retry), "the retried round's request carries the summary");
      const [first, ...rest] = retry.body.messages;
      assert.equal(first?.role, 'system');
      assert.match(String(first?.content), system === undefined ? /^Summary of the earlier attempt/ : /^Be terse\.\n\nSummary of the earlier attempt/);
      assert.match(String(first?.content), /tool_spiral/);
      assert.deepEqual(
        rest.map((m) => [m.role, m.content]),
        [['user', 'Search x please']],
        'the looping turn and the history before it were flushed',
      );
      const history = await memory.get(conversation);
      assert.deepEqual(
        history.map((m) => m.role),
        ['system', 'user', 'assistant'],
      );
      assert.match(String(history[0]?.content), /^Summary of the earlier attempt/);
    });
  }
});

test('a memory without clear() is refused when the advisor is made, not when a stop needs it', () => {
  const memory = { get: async () => [], add: async () => {} };
  assert.throws(
    () => new BreakerRecoveryAdvisor({ breaker: new AgentBreaker(), memory: memory as unknown as MessageWindowChatMemory }),
    (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'memory' && /get, add and clear/.test(e.message),
  );
});

describe('BreakerRecoveryAdvisor under AgentLoop', () => {
  const TASK = 'Rename the function foo to bar in src/a.ts';
  for (const withMemory of [true, false]) {
    test(`a stop in a continuation turn retries with the task before the reminder (${withMemory ? 'with' : 'without'} a chat memory)`, async () => {
      const summarized = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes('Summary of the earlier attempt');
      let retried: RecordedRequest | undefined;
      await using server = await new ScriptedModelServer({
        script: (request, i) => {
          if (summarized(request)) {
            retried ??= request;
            return { toolCalls: [{ name: 'submit', arguments: { summary: 'renamed' } }] };
          }
          // No tool call at first: AgentLoop goes on with a continuation turn, in which the agent loops.
          return i === 0 ? { text: 'Let me think first.' } : { toolCalls: [{ name: 'search', arguments: { q: 'foo' } }] };
        },
      }).start();
      const search = tool({ inputSchema: z.object({ q: z.string() }), execute: async () => 'no results' });
      const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
      const memory = new MessageWindowChatMemory();
      const client = ChatClient.builder(scriptedModel(server))
        .defaultAdvisors(
          new ToolCallingAdvisor(),
          breaker,
          new BreakerRecoveryAdvisor({ breaker, ...(withMemory ? { memory } : {}) }),
          ...(withMemory ? [new MessageChatMemoryAdvisor({ memory })] : []),
        )
        .defaultTools({ search, submit: submitTool() })
        .build();
      const result = await new AgentLoop({ client, maxInvocations: 15, conversationId: 'run-1' }).run(TASK);
      assert.equal(result.status, 'completed');
      // Without a memory, the summary goes first as a user message of its own.
      const users = (retried?.body.messages ?? [])
        .filter((m) => m.role === 'user')
        .map((m) => String(m.content))
        .filter((text) => !text.startsWith('Summary of the earlier attempt'));
      assert.equal(users[0], TASK, 'the task comes first');
      assert.match(users.at(-1) ?? '', /You have not called `submit` yet/);
      if (withMemory) assert.match(JSON.stringify(await memory.get('run-1')), /Rename the function foo to bar/, 'the memory holds the task again');
    });
  }

  test("a loop's second run in one conversation retries with its own task, not the conversation's first", async () => {
    const FIRST = 'Delete the temporary branch feature/tmp';
    let phase = 1;
    let calls = 0;
    let retried: RecordedRequest | undefined;
    await using server = await new ScriptedModelServer({
      script: (request) => {
        const sent = JSON.stringify(request.body.messages);
        if (phase === 1) return calls++ === 0 ? { text: 'Deleting it.' } : { toolCalls: [{ name: 'submit', arguments: { summary: 'deleted' } }] };
        if (sent.includes('Summary of the earlier attempt')) {
          retried ??= request;
          return { toolCalls: [{ name: 'submit', arguments: { summary: 'renamed' } }] };
        }
        // Run 2 thinks first, so its loop comes in a continuation turn.
        return calls++ === 2 ? { text: 'Let me think first.' } : { toolCalls: [{ name: 'search', arguments: { q: 'foo' } }] };
      },
    }).start();
    const search = tool({ inputSchema: z.object({ q: z.string() }), execute: async () => 'no results' });
    const breaker = new AgentBreaker({ toolSpiral: { escalation: ['stop'] } });
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker, new MessageChatMemoryAdvisor({ memory }), new BreakerRecoveryAdvisor({ breaker, memory }))
      .defaultTools({ search, submit: submitTool() })
      .build();
    const loop = new AgentLoop({ client, maxInvocations: 15, conversationId: 'user-42' });
    assert.equal((await loop.run(FIRST)).status, 'completed');
    phase = 2;
    assert.equal((await loop.run(TASK)).status, 'completed');
    const sent = JSON.stringify(retried?.body.messages);
    assert.match(sent, /Rename the function foo to bar/);
    assert.match(sent, /You have not called `submit` yet/);
    assert.doesNotMatch(sent, /Delete the temporary branch/);
  });
});
