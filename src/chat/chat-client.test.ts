import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { jsonSchema, tool } from 'ai';
import {
  AdvisorNotInChainError,
  AdvisorResultError,
  beforeAfterAdvisor,
  ChatClient,
  CONVERSATION_ID,
  DefaultAdvisorChain,
  EntityParseError,
  EntityPendingError,
  GovernorError,
  InvalidOptionError,
  ModelCallTerminal,
  ToolCallAdvisor,
  toolApprovalResponse,
  UnsupportedModelError,
  type Advisor,
  type AdvisorChain,
  type ChatClientRequest,
  type ChatStreamEvent,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';

const weather = tool({
  description: 'weather',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `15°C in ${city}`,
});

function counter(name: string, order: number): Advisor & { calls: number; streams: number } {
  const advisor = {
    name,
    order,
    calls: 0,
    streams: 0,
    async adviseCall(request: Parameters<NonNullable<Advisor['adviseCall']>>[0], chain: AdvisorChain) {
      advisor.calls += 1;
      return chain.nextCall(request);
    },
    async *adviseStream(request: Parameters<NonNullable<Advisor['adviseStream']>>[0], chain: AdvisorChain) {
      advisor.streams += 1;
      yield* chain.nextStream(request);
    },
  };
  return advisor;
}

const threeRounds = () =>
  mockModel([
    { toolCalls: [{ name: 'weather', input: { city: 'Paris' } }] },
    { toolCalls: [{ name: 'weather', input: { city: 'Rome' } }] },
    { text: 'Paris 15, Rome 15', inputTokens: 30, outputTokens: 7 },
  ]);

describe('ChatClient', () => {
  test('content() returns the answer text through system, user and default options', async () => {
    const model = mockModel([{ text: 'Hi there' }]);
    const client = ChatClient.builder(model).defaultSystem('You are terse.').defaultOptions({ temperature: 0.2 }).build();
    assert.equal(await client.prompt().user('Hello').call().content(), 'Hi there');
    const sent = model.doGenerateCalls[0]!;
    assert.equal(sent.temperature, 0.2);
    assert.deepEqual(sent.prompt[0], { role: 'system', content: 'You are terse.' });
    assert.equal(sent.prompt[1]!.role, 'user');
  });

  test('an advisor outside the tool loop runs once per call, one inside once per model round', async () => {
    const outer = counter('outer', -2_000_000);
    const inner = counter('inner', 0);
    const client = ChatClient.builder(threeRounds()).defaultAdvisors(inner, new ToolCallAdvisor(), outer).defaultTools({ weather }).build();
    const response = await client.prompt('Weather?').call().chatResponse();
    assert.equal(response.text, 'Paris 15, Rome 15');
    assert.equal(outer.calls, 1);
    assert.equal(inner.calls, 3);
    assert.equal(response.rounds, 3);
  });

  test('the same holds in stream(), and the text streams in pieces', async () => {
    const outer = counter('outer', -2_000_000);
    const inner = counter('inner', 0);
    const client = ChatClient.builder(threeRounds()).defaultAdvisors(new ToolCallAdvisor(), inner, outer).defaultTools({ weather }).build();
    const deltas: string[] = [];
    for await (const delta of client.prompt('Weather?').stream().content()) deltas.push(delta);
    assert.equal(deltas.join(''), 'Paris 15, Rome 15');
    assert.ok(deltas.length >= 2);
    assert.equal(outer.streams, 1);
    assert.equal(inner.streams, 3);
  });

  test('stream().chatResponse() yields tool results and exactly one finish with summed usage', async () => {
    const client = ChatClient.builder(threeRounds()).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ weather }).build();
    const events: ChatStreamEvent[] = [];
    for await (const event of client.prompt('Weather?').stream().chatResponse()) events.push(event);
    const finishes = events.filter((e) => e.type === 'finish');
    assert.equal(finishes.length, 1);
    assert.equal(events.at(-1)!.type, 'finish');
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-result').map((e) => (e as { output: unknown }).output),
      ['15°C in Paris', '15°C in Rome'],
    );
    const final = (finishes[0] as Extract<ChatStreamEvent, { type: 'finish' }>).response.response;
    assert.deepEqual(final.totalUsage, { inputTokens: 50, outputTokens: 17, cachedInputTokens: 0 });
  });

  test('usage is summed over every round, unknown stays unknown', async () => {
    const client = ChatClient.builder(threeRounds()).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ weather }).build();
    const response = await client.prompt('Weather?').call().chatResponse();
    assert.deepEqual(response.usage, { inputTokens: 30, outputTokens: 7, cachedInputTokens: 0 });
    assert.deepEqual(response.totalUsage, { inputTokens: 50, outputTokens: 17, cachedInputTokens: 0 });

    const unknown = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'ok' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 3, text: 3, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    const r = await ChatClient.create(unknown).prompt('x').call().chatResponse();
    assert.equal(r.totalUsage.inputTokens, undefined);
    assert.equal(r.totalUsage.outputTokens, 3);
  });

  test('accepts a V3 model and rejects values that are not models with a typed error naming the versions', async () => {
    const v3 = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'from v3' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
        warnings: [],
      }),
    });
    assert.equal(await ChatClient.create(v3).prompt('x').call().content(), 'from v3');
    assert.throws(
      // @ts-expect-error a model id is not a model: the type refuses it, and the check does for JavaScript callers.
      () => ChatClient.builder('openai/gpt-4o'),
      (e: unknown) => e instanceof UnsupportedModelError && /"v2", "v3", "v4"/.test(e.message),
    );
    // @ts-expect-error a spec Governor does not drive
    assert.throws(() => ChatClient.builder({ specificationVersion: 'v1', doGenerate() {}, doStream() {} }), UnsupportedModelError);
  });

  test('advisor params reach the context and the context survives every round', async () => {
    const seen: unknown[] = [];
    const spy = beforeAfterAdvisor({
      name: 'spy',
      before: (request) => {
        seen.push(request.context.get(CONVERSATION_ID));
        request.context.set('rounds', ((request.context.get('rounds') as number | undefined) ?? 0) + 1);
        return request;
      },
    });
    const client = ChatClient.builder(threeRounds()).defaultAdvisors(new ToolCallAdvisor(), spy).defaultTools({ weather }).build();
    const result = await client
      .prompt('Weather?')
      .advisors((a) => a.param(CONVERSATION_ID, 'c-42'))
      .call()
      .chatClientResponse();
    assert.deepEqual(seen, ['c-42', 'c-42', 'c-42']);
    assert.equal(result.context.get('rounds'), 3);
  });

  test('advisors are sorted by order and ties keep registration order', async () => {
    const trail: string[] = [];
    const mk = (name: string, order: number) =>
      beforeAfterAdvisor({
        name,
        order,
        before: (r) => {
          trail.push(name);
          return r;
        },
      });
    const client = ChatClient.builder(mockModel([{ text: 'ok' }]))
      .defaultAdvisors(mk('b', 5), mk('a', 1), mk('c', 5), mk('d', 5))
      .build();
    await client.prompt('x').call().content();
    assert.deepEqual(trail, ['a', 'b', 'c', 'd']);
  });

  test('chain.copy(after) holds exactly the advisors after `after`; an advisor not in the chain throws', async () => {
    const a = counter('a', 1);
    const b = counter('b', 2);
    const c = counter('c', 3);
    let copied: string[] = [];
    let misuse: unknown;
    const probe: Advisor = {
      name: 'probe',
      order: 0,
      async adviseCall(request, chain) {
        copied = chain.copy(b).advisors.map((x) => x.name);
        try {
          chain.copy({ name: 'stranger', order: 9 });
        } catch (error) {
          misuse = error;
        }
        return chain.nextCall(request);
      },
    };
    await ChatClient.builder(mockModel([{ text: 'ok' }]))
      .defaultAdvisors(a, b, c, probe)
      .build()
      .prompt('x')
      .call()
      .content();
    assert.deepEqual(copied, ['c']);
    assert.ok(misuse instanceof AdvisorNotInChainError);
    assert.match((misuse as Error).message, /stranger/);
  });

  test('one advisor instance registered twice is refused, naming it, before anything runs', async () => {
    const isDuplicate = (name: string) => (e: unknown) =>
      GovernorError.isInstance(e) && e.code === 'GOVERNOR_DUPLICATE_ADVISOR' && e.name === 'DuplicateAdvisorError' && e.message.includes(`"${name}"`);
    const model = mockModel([{ text: 'never' }]);
    const twice = counter('twice', 0);
    assert.throws(() => ChatClient.builder(model).defaultAdvisors(twice, twice).build(), isDuplicate('twice'));

    const client = ChatClient.builder(model).defaultAdvisors(twice).build();
    assert.throws(() => client.mutate().defaultAdvisors(twice).build(), isDuplicate('twice'));
    // A default added again on the request: refused in call() and in stream().
    await assert.rejects(client.prompt('x').advisors(twice).call().content(), isDuplicate('twice'));
    await assert.rejects(async () => {
      for await (const _ of client.prompt('x').advisors(twice).stream().content()) {
        // driven only
      }
    }, isDuplicate('twice'));
    assert.equal(twice.calls + twice.streams, 0);
    assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 0);
    // Two instances of one kind are two advisors.
    assert.equal(
      await ChatClient.builder(mockModel([{ text: 'ok' }]))
        .defaultAdvisors(twice, counter('twice', 0))
        .build()
        .prompt('x')
        .call()
        .content(),
      'ok',
    );
  });

  test('an advisor that forgets to return what the chain gave it fails naming itself, in call() and in stream()', async () => {
    const forgetful: Advisor = {
      name: 'Forgetful',
      order: 5,
      async adviseCall(request, chain) {
        await chain.nextCall(request);
        return undefined as never;
      },
      adviseStream(request, chain) {
        void chain.nextStream(request);
        return undefined as never;
      },
    };
    const client = ChatClient.builder(mockModel([{ text: 'one' }, { text: 'two' }]))
      .defaultAdvisors(forgetful)
      .build();
    await assert.rejects(
      client.prompt('x').call().content(),
      (e: unknown) =>
        AdvisorResultError.isInstance(e) &&
        e.advisor === 'Forgetful' &&
        e.method === 'adviseCall' &&
        e.message.includes('adviseCall returned undefined') &&
        e.message.includes('return chain.nextCall(request);'),
    );
    await assert.rejects(
      async () => {
        for await (const _ of client.prompt('x').stream().content()) {
          // driven only
        }
      },
      (e: unknown) => AdvisorResultError.isInstance(e) && e.method === 'adviseStream' && e.message.includes('async *adviseStream'),
    );
  });

  test('an advisor with no method to run (a misspelt one) is refused where it is added', () => {
    const misspelt = { name: 'Misspelt', order: 0, adviceCall: async () => undefined };
    assert.throws(
      () => ChatClient.builder(mockModel([])).defaultAdvisors(misspelt as Advisor),
      (e: unknown) =>
        InvalidOptionError.isInstance(e) && e.option === 'defaultAdvisors[0]' && /"Misspelt" has no adviseCall, adviseStream or observe method/.test(e.message),
    );
    assert.throws(
      () =>
        ChatClient.create(mockModel([]))
          .prompt('x')
          .advisors(misspelt as Advisor),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'advisors[0]',
    );
  });

  test('a chain holding one recursive advisor twice runs each place once, never itself again', async () => {
    let entered = 0;
    const recursive: Advisor = {
      name: 'recursive',
      order: 0,
      async adviseCall(request, chain) {
        // Turns endless recursion into a failure instead of a hung test.
        if (++entered > 10) throw new Error('the chain recursed into the same place');
        return chain.copy(recursive).nextCall(request);
      },
    };
    const model = mockModel([{ text: 'ok' }]);
    const request: ChatClientRequest = {
      system: undefined,
      messages: [{ role: 'user', content: 'x' }],
      tools: {},
      options: {},
      responseFormat: undefined,
      context: new Map(),
      abortSignal: undefined,
    };
    const { response } = await new DefaultAdvisorChain([recursive, recursive], new ModelCallTerminal(model)).nextCall(request);
    assert.equal(response.text, 'ok');
    assert.equal(entered, 2);
    assert.equal(model.doGenerateCalls.length, 1);
  });

  test('request and builder settings are checked where they are set, naming the setting', () => {
    const client = ChatClient.create(mockModel([{ text: 'never' }]));
    const bad: Array<[string, () => unknown]> = [
      ['system', () => client.prompt('x').system(5 as never)],
      ['user', () => client.prompt().user(5 as never)],
      ['messages[1]', () => client.prompt().messages({ role: 'user', content: 'a' }, 'hello' as never)],
      ['messages[0].role', () => client.prompt().messages({ role: 'human', content: 'a' } as never)],
      ['tools.t', () => client.prompt('x').tools({ t: null as never })],
      ['advisors[0]', () => client.prompt('x').advisors({ name: 1 } as never)],
      ['advisors[1]', () => client.prompt('x').advisors((a) => a, { name: 'a', order: Number.NaN })],
      ['advisors[0]', () => client.prompt('x').advisors((a) => a.advisors({ name: 'b' } as never))],
      ['params', () => client.prompt('x').advisors((a) => a.params(null as never))],
      ['abortSignal', () => client.prompt('x').abortSignal('x' as never)],
      ['defaultMessages[0]', () => ChatClient.builder(mockModel([])).defaultMessages('hello' as never)],
      ['defaultAdvisorParams', () => ChatClient.builder(mockModel([])).defaultAdvisorParams(null as never)],
    ];
    for (const [option, set] of bad) {
      assert.throws(set, (e: unknown) => InvalidOptionError.isInstance(e) && e.option === option, `expected InvalidOptionError naming ${option}`);
    }
    // No signal is no signal.
    client.prompt('x').abortSignal(undefined);
  });

  test('entity() asks for JSON and returns the parsed, validated object', async () => {
    const model = mockModel([{ text: '```json\n{"actor":"Tom Hanks","movies":["Big","Cast Away"]}\n```' }]);
    const films = await ChatClient.create(model)
      .prompt('Tom Hanks films')
      .call()
      .entity(z.object({ actor: z.string(), movies: z.array(z.string()) }));
    assert.deepEqual(films, { actor: 'Tom Hanks', movies: ['Big', 'Cast Away'] });
    assert.equal(model.doGenerateCalls[0]!.responseFormat?.type, 'json');
  });

  test('one call() spec runs each request once: its views share one, entity() runs one per schema however often it is asked', async () => {
    const model = mockModel([{ text: 'Big and Cast Away.' }, { text: '{"actor":"Tom Hanks"}' }, { text: '{"year":1988}' }]);
    const spec = ChatClient.create(model).prompt('Tom Hanks films').call();
    assert.equal(await spec.content(), 'Big and Cast Away.');
    assert.equal((await spec.chatResponse()).text, 'Big and Cast Away.');
    const actor = z.object({ actor: z.string() });
    assert.deepEqual(await spec.entity(actor), { actor: 'Tom Hanks' });
    assert.deepEqual(await spec.entity(actor), { actor: 'Tom Hanks' });
    assert.deepEqual(await spec.entity(z.object({ year: z.number() })), { year: 1988 });
    assert.equal(model.doGenerateCalls.length, 3);
    await assert.rejects(spec.entity(undefined as never), (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'entity(schema)');
    assert.equal(model.doGenerateCalls.length, 3, 'a value that is no schema is refused before any model call');
  });

  test('entity() without a validation advisor throws EntityParseError on a wrong answer', async () => {
    const client = ChatClient.create(mockModel([{ text: '{"actor": 3}' }]));
    await assert.rejects(
      client
        .prompt('x')
        .call()
        .entity(z.object({ actor: z.string() })),
      EntityParseError,
    );
  });

  test('entity() of a call that stops at an approval: EntityPendingError with the response to go on from', async () => {
    const ran: string[] = [];
    const refund = tool({
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: async ({ amount }) => {
        ran.push(`refund ${amount}`);
        return 'refunded';
      },
    });
    const notify = tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async ({ to }) => {
        ran.push(`notify ${to}`);
        return 'sent';
      },
    });
    const model = mockModel([
      {
        toolCalls: [
          { name: 'refund', input: { amount: 500 } },
          { name: 'notify', input: { to: 'ada' } },
        ],
      },
      { text: '{"done": true}' },
    ]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ refund, notify }).build();
    const Result = z.object({ done: z.boolean() });
    const error: unknown = await client
      .prompt('Refund order 7 and tell Ada')
      .call()
      .entity(Result)
      .then(
        () => assert.fail('resolved'),
        (e: unknown) => e,
      );
    assert.ok(EntityPendingError.isInstance(error), String(error));
    assert.equal(error.code, 'GOVERNOR_ENTITY_PENDING');
    assert.match(error.message, /1 tool call waiting for approval \(refund\)/);
    assert.deepEqual(ran, ['notify ada']);
    const pending = error.response.pendingApprovals!;
    assert.equal(pending.length, 1);
    // Going on as the README shows it: the call's messages, then the answers.
    const answer = toolApprovalResponse(pending.map((p) => ({ approvalId: p.approvalId, approved: true })));
    const done = await client
      .prompt()
      .messages({ role: 'user', content: 'Refund order 7 and tell Ada' }, ...error.response.messages, answer)
      .call()
      .entity(Result);
    assert.deepEqual(done, { done: true });
    assert.deepEqual(ran, ['notify ada', 'refund 500']);
  });

  test('entity() of a call that hands client-side tool calls back: EntityPendingError naming them', async () => {
    const askUser = tool({ inputSchema: z.object({ q: z.string() }) });
    const model = mockModel([{ toolCalls: [{ name: 'askUser', input: { q: 'which order?' } }] }]);
    const client = ChatClient.builder(model).defaultAdvisors(new ToolCallAdvisor()).defaultTools({ askUser }).build();
    await assert.rejects(
      client
        .prompt('Refund my order')
        .call()
        .entity(z.object({ done: z.boolean() })),
      (e: unknown) =>
        EntityPendingError.isInstance(e) &&
        /1 tool call for the caller to run \(askUser\)/.test(e.message) &&
        e.response.toolCalls[0]?.toolName === 'askUser' &&
        e.response.finishReason === 'tool-calls',
    );
  });

  test('responseEntity() gives the entity with its response; with entity() on the same schema it is one request', async () => {
    const model = mockModel([{ text: '{"actor":"Tom Hanks"}', inputTokens: 120, outputTokens: 8 }]);
    const spec = ChatClient.create(model).prompt('Tom Hanks').call();
    const Actor = z.object({ actor: z.string() });
    const { entity, response } = await spec.responseEntity(Actor);
    const typed: { actor: string } = entity;
    assert.deepEqual(typed, { actor: 'Tom Hanks' });
    assert.equal(response.totalUsage.inputTokens, 120);
    assert.deepEqual(
      response.messages.map((m) => m.role),
      ['assistant'],
    );
    assert.deepEqual(await spec.entity(Actor), { actor: 'Tom Hanks' });
    assert.equal(model.doGenerateCalls.length, 1);
  });

  test('EntityParseError carries the response: what the failed answer cost; logging the error does not print its messages', async () => {
    const client = ChatClient.create(
      mockModel([{ text: '{"actor": 3, "note": "sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6qW0eRt"}', inputTokens: 50, outputTokens: 5 }]),
    );
    await assert.rejects(
      client
        .prompt('x')
        .call()
        .entity(z.object({ actor: z.string() })),
      (e: unknown) => {
        assert.ok(EntityParseError.isInstance(e));
        assert.equal(e.response?.totalUsage.inputTokens, 50);
        assert.equal(e.response?.messages.length, 1);
        assert.ok(!Object.keys(e).includes('response'));
        assert.doesNotMatch(JSON.stringify({ ...e, text: undefined }), /sk-proj/);
        return true;
      },
    );
  });

  test('entity() takes an AI SDK jsonSchema, typed by it', async () => {
    const model = mockModel([{ text: '{"q": 2}' }]);
    const Q = jsonSchema<{ q: number }>({ type: 'object', properties: { q: { type: 'number' } }, required: ['q'] });
    const value: { q: number } = await ChatClient.create(model).prompt('x').call().entity(Q);
    assert.deepEqual(value, { q: 2 });
  });

  test('a request without messages is rejected before any model call', async () => {
    const model = mockModel([{ text: 'never' }]);
    await assert.rejects(ChatClient.create(model).prompt().call().content(), /no messages/);
    assert.equal(model.doGenerateCalls.length, 0);
  });

  test('an aborted signal stops the call before the model is called', async () => {
    const model = mockModel([{ text: 'never' }]);
    const controller = new AbortController();
    controller.abort(new Error('user cancelled'));
    await assert.rejects(ChatClient.create(model).prompt('x').abortSignal(controller.signal).call().content(), /user cancelled/);
    assert.equal(model.doGenerateCalls.length, 0);
  });
});
