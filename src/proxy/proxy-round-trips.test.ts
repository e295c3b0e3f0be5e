import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { createClient } from 'redis';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { BreakerStore } from '../breaker/breaker-store.ts';
import { InMemoryBreakerStore } from '../breaker/in-memory-breaker-store.ts';
import { RedisBreakerStore, type RedisCommandClient } from '../redis/redis-breaker-store.ts';
import { requireRedis } from '../test-support/services.ts';
import { ScriptedModelServer, type ScriptedTurn } from '../testing/index.ts';
import { startModelProxy } from './index.ts';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const SEARCH: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'search', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
};

/** One round of an agent loop: ask, then answer each tool call. */
async function round(client: OpenAI, messages: Message[], result: string): Promise<OpenAI.Chat.Completions.ChatCompletionMessage> {
  const answer = await client.chat.completions.create({ model: 'm', messages, tools: [SEARCH] });
  const message = answer.choices[0]!.message;
  messages.push(message as Message);
  for (const call of message.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: result });
  return message;
}

/** A node-redis client that counts the times the store waits on the server: commands sent while none is in flight. */
function countingClient(client: ReturnType<typeof createClient>): RedisCommandClient & { waits: number; sent: string[] } {
  let inFlight = 0;
  const counting = {
    waits: 0,
    sent: [] as string[],
    sendCommand(args: readonly string[], options?: unknown): Promise<unknown> {
      counting.sent.push(`${inFlight === 0 ? '|' : '+'}${args[0]} ${args[0] === 'EVALSHA' ? args[1]?.slice(0, 6) : ''}`);
      if (inFlight === 0) counting.waits += 1;
      inFlight += 1;
      return (client.sendCommand as (args: readonly string[], options?: unknown) => Promise<unknown>)(args, options).finally(() => {
        inFlight -= 1;
      });
    },
    // As the client it wraps, so the store sends as it does to that client.
    get isReady() {
      return client.isReady;
    },
  };
  return counting as RedisCommandClient & { waits: number; sent: string[] };
}

describe('governor proxy on a shared Redis store: round trips per request', () => {
  let client: ReturnType<typeof createClient>;
  before(async () => {
    client = createClient({ url: await requireRedis() });
    await client.connect();
  });
  after(async () => {
    await client.quit();
  });

  test('a request bringing a tool result and getting a tool call back waits on the store 4 times, its checks included', async () => {
    const counting = countingClient(client);
    const store = new RedisBreakerStore({ client: counting, keyPrefix: `governor:test:rt:${randomUUID()}:` });
    // As `governor proxy --store` sets it: every gate reads the shared state.
    const breaker = new AgentBreaker({ store, checkFreshnessMs: 0 });
    let n = 0;
    const upstream = await new ScriptedModelServer({ script: () => ({ toolCalls: [{ name: 'search', arguments: { q: `flights, page ${++n}` } }] }) }).start();
    const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    try {
      const sessionId = randomUUID();
      const agent = new OpenAI({
        baseURL: `${proxy.url}/v1`,
        apiKey: 'sk-test-not-a-real-key',
        maxRetries: 0,
        defaultHeaders: { 'x-governor-session': sessionId },
      });
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const waits: number[] = [];
      const sent: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        counting.waits = 0;
        counting.sent.length = 0;
        const message = await round(agent, messages, `No flights on page ${i + 1}.`);
        assert.equal(message.tool_calls?.length, 1, 'every call passes: each page is a new search');
        waits.push(counting.waits);
        sent.push(counting.sent.join(' '));
      }
      // Before the model: the gate (with the steer inbox), the claim of what is new, the tool result; after it, the
      // answer. The answer's tool call is checked against the state its recording left, without another read.
      assert.deepEqual(waits.slice(1), [4, 4, 4], `commands sent (| waits, + goes with the one before):\n${sent.join('\n')}`);
      // Nothing was left out to save them: the user turn, 3 tool results and 4 answers, each recorded once.
      const { counters } = await breaker.snapshot(sessionId);
      assert.deepEqual([counters.userEvents, counters.toolCalls, counters.modelCalls], [1, 3, 4]);
    } finally {
      await proxy.close();
      await upstream.close();
      await store.close();
    }
  });

  test("a steered or blocked call waits twice more; a load balancer's retry of its request, on another replica, waits no more than it did", async () => {
    const keyPrefix = `governor:test:rt:${randomUUID()}:`;
    const upstream = await new ScriptedModelServer({ script: () => ({ toolCalls: [{ name: 'search', arguments: { q: 'flights to Oslo' } }] }) }).start();
    const sessionId = randomUUID();
    const replica = async () => {
      const counting = countingClient(client);
      const store = new RedisBreakerStore({ client: counting, keyPrefix });
      const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker: new AgentBreaker({ store, checkFreshnessMs: 0 }), port: 0 });
      const agent = new OpenAI({
        baseURL: `${proxy.url}/v1`,
        apiKey: 'sk-test-not-a-real-key',
        maxRetries: 0,
        defaultHeaders: { 'x-governor-session': sessionId },
      });
      return { counting, store, proxy, agent };
    };
    const a = await replica();
    const b = await replica();
    try {
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      const waits: string[] = [];
      const sent: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        for (const replica of [a, b]) {
          replica.counting.waits = 0;
          replica.counting.sent.length = 0;
        }
        // The original on replica a, its answer lost; the retry on replica b, whose answer the agent goes on with.
        const original = (await a.agent.chat.completions.create({ model: 'm', messages, tools: [SEARCH] })).choices[0]!.message;
        const retried = await round(b.agent, messages, 'No flights found.');
        if ((retried.tool_calls ?? []).length === 0) messages.push({ role: 'user', content: 'Keep trying.' });
        const what = (message: OpenAI.Chat.Completions.ChatCompletionMessage): string => ((message.tool_calls ?? []).length > 0 ? 'call' : 'block');
        waits.push(`${what(original)} ${a.counting.waits}/${what(retried)} ${b.counting.waits}`);
        sent.push(`${a.counting.sent.join(' ')} / ${b.counting.sent.join(' ')}`);
      }
      // The third search is steered: recording the escalation, then its steer with the verdicts kept for a retry. The
      // retry observes nothing again and reads the verdicts with its answer; a steer is queued again, for the next request.
      // The fourth is blocked the same way, its retry too.
      assert.deepEqual(
        waits,
        ['call 4/call 3', 'call 4/call 3', 'call 6/call 4', 'block 6/block 3'],
        `commands sent (| waits, + goes with the one before):\n${sent.join('\n')}`,
      );
    } finally {
      for (const { proxy, store } of [a, b]) {
        await proxy.close();
        await store.close();
      }
      await upstream.close();
    }
  });
});

describe('governor proxy: steer messages and a refused gate', () => {
  test('a steer waiting for the next request survives a gate the store fails (fail-closed) and reaches the retry', async () => {
    const inner = new InMemoryBreakerStore();
    let failures = 0;
    const store: BreakerStore = {
      read: (id) => (failures-- > 0 ? Promise.reject(new Error('connect ECONNREFUSED')) : inner.read(id)),
      apply: (id, op, reducer) => inner.apply(id, op, reducer),
      delete: (id) => inner.delete(id),
    };
    const breaker = new AgentBreaker({ store, onStoreError: 'fail-closed', checkFreshnessMs: 0 });
    const spiral: ScriptedTurn[] = [{ toolCalls: [{ name: 'search', arguments: { q: 'flights to Oslo' } }] }];
    const upstream = await new ScriptedModelServer({ script: spiral, onExhausted: 'repeat-last' }).start();
    const proxy = await startModelProxy({ upstream: upstream.baseURL, breaker, port: 0 });
    try {
      const agent = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test-not-a-real-key', maxRetries: 1 });
      const messages: Message[] = [{ role: 'user', content: 'Find me a flight to Oslo.' }];
      // The third identical search is steered: the message waits for the next request.
      for (let i = 0; i < 3; i += 1) await round(agent, messages, 'No flights found.');
      assert.equal(upstream.requests.length, 3);
      // The next request's gate cannot read the store: refused with a 503, which the client retries.
      failures = 1;
      await round(agent, messages, 'No flights found.');
      assert.equal(upstream.requests.length, 4, 'the refused request never went upstream');
      assert.match(JSON.stringify(upstream.requests[3]!.body.messages), /No flights found\.\\n\\n\[governor\] .*search/);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
