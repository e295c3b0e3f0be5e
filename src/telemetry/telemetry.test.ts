import assert from 'node:assert/strict';
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import { tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  AgentBreaker,
  AgentBreakerError,
  AgentLoop,
  BreakerRecoveryAdvisor,
  BreakerOpenError,
  ChatClient,
  CONVERSATION_ID,
  InvalidOptionError,
  TELEMETRY,
  TextRepetitionError,
  ToolCallingAdvisor,
  ToolSpiralError,
  submitTool,
  type ChatStreamEvent,
  type TelemetryOptions,
  type ToolCallListener,
} from '../index.ts';
import { mockModel, type MockTurn } from '../test-support/mock-model.ts';
import { OtelHarness } from './test-support/otel-harness.ts';
import { getStatus, stuckOnStatus } from './test-support/stuck-agent.ts';

const otel = new OtelHarness();

const weather = tool({
  description: 'Weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `15°C in ${city}`,
});

const twoRounds = (): MockTurn[] => [
  { toolCalls: [{ name: 'weather', input: { city: 'Paris' }, id: 'call-1' }], inputTokens: 10, outputTokens: 2 },
  { text: 'It is 15°C in Paris.', inputTokens: 30, outputTokens: 7 },
];

function allAttributeText(): string {
  return JSON.stringify(otel.spans().map((s) => [s.attributes, s.events.map((e) => e.attributes)]));
}

describe('OpenTelemetry through @opentelemetry/api', () => {
  beforeEach(() => {
    otel.install();
  });
  afterEach(async () => {
    await otel.uninstall();
  });
  after(async () => {
    await otel.uninstall();
  });

  test('an AgentLoop run is a span tree: invoke_agent > chat_client > advisors > one chat span per round and one execute_tool span', async () => {
    const client = ChatClient.builder(mockModel(twoRounds())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build();
    const result = await new AgentLoop({ client, finishTool: null, conversationId: 'c-7' }).run('Weather in Paris?');
    assert.equal(result.status, 'completed');

    assert.deepEqual(otel.tree(), [
      'invoke_agent AgentLoop',
      '  chat_client mock-model-id',
      '    advisor ToolCallingAdvisor',
      '      advisor AgentLoopTranscript',
      '        advisor AgentLoopGuard',
      '          chat mock-model-id',
      '      execute_tool weather',
      '      advisor AgentLoopTranscript',
      '        advisor AgentLoopGuard',
      '          chat mock-model-id',
    ]);
    const [first, second] = otel.spans().filter((s) => s.name === 'chat mock-model-id');
    assert.deepEqual(
      [first!.attributes, second!.attributes].map((a) => [
        a['gen_ai.operation.name'],
        a['gen_ai.provider.name'],
        a['gen_ai.request.model'],
        a['gen_ai.usage.input_tokens'],
        a['gen_ai.usage.output_tokens'],
        a['gen_ai.usage.cache_read.input_tokens'],
        a['gen_ai.response.finish_reasons'],
        a['gen_ai.conversation.id'],
      ]),
      [
        ['chat', 'mock-provider', 'mock-model-id', 10, 2, 0, ['tool_calls'], 'c-7'],
        ['chat', 'mock-provider', 'mock-model-id', 30, 7, 0, ['stop'], 'c-7'],
      ],
    );
    const toolSpan = otel.span('execute_tool weather');
    assert.equal(toolSpan.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(toolSpan.attributes['gen_ai.tool.name'], 'weather');
    assert.equal(toolSpan.attributes['gen_ai.tool.call.id'], 'call-1');
    assert.equal(toolSpan.attributes['governor.tool.outcome'], 'success');
    const agent = otel.span('invoke_agent AgentLoop');
    assert.equal(agent.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(agent.attributes['governor.agent_loop.status'], 'completed');
    assert.equal(agent.attributes['governor.usage.total_input_tokens'], 40);

    const tokens = await otel.points('gen_ai.client.token.usage');
    const sumOf = (type: string): number => tokens.filter((p) => p.attributes['gen_ai.token.type'] === type).reduce((a, p) => a + p.value, 0);
    assert.equal(sumOf('input'), 40);
    assert.equal(sumOf('output'), 9);
    assert.equal(tokens[0]!.attributes['gen_ai.request.model'], 'mock-model-id');
    const durations = await otel.points('gen_ai.client.operation.duration');
    assert.equal(
      durations.reduce((a, p) => a + (p.count ?? 0), 0),
      2,
    );
    assert.deepEqual(
      (await otel.points('governor.tool.calls')).map((p) => [p.attributes, p.value]),
      [[{ 'gen_ai.tool.name': 'weather', 'governor.tool.outcome': 'success' }, 1]],
    );
    assert.deepEqual(
      (await otel.points('governor.agent_loop.ends')).map((p) => [p.attributes, p.value]),
      [[{ 'governor.agent_loop.status': 'completed', 'gen_ai.agent.name': 'AgentLoop' }, 1]],
    );
  });

  test('stream() keeps the same parents across yields: every round and tool span sits under the client call', async () => {
    const client = ChatClient.builder(mockModel(twoRounds())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build();
    const events: ChatStreamEvent[] = [];
    for await (const event of client.prompt('Weather?').stream().chatResponse()) events.push(event);
    assert.equal(events.at(-1)!.type, 'finish');
    assert.deepEqual(otel.tree(), [
      'chat_client mock-model-id',
      '  advisor ToolCallingAdvisor',
      '    chat mock-model-id',
      '    execute_tool weather',
      '    chat mock-model-id',
    ]);
    const call = otel.span('chat_client mock-model-id');
    assert.equal(call.attributes['governor.chat_client.stream'], true);
    assert.equal(call.attributes['governor.chat_client.rounds'], 2);
    assert.equal(call.attributes['governor.usage.total_output_tokens'], 9);
  });

  test('a breaker stop is a span event on the breaker advisor span, an error on the call, and counted by category and action', async () => {
    const breaker = new AgentBreaker();
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker)
      .defaultTools({ get_status: getStatus })
      .build();
    await assert.rejects(
      client
        .prompt('Is the build done?')
        .advisors((a) => a.param(CONVERSATION_ID, 'stuck-1'))
        .call()
        .content(),
      (e: unknown) => e instanceof ToolSpiralError,
    );

    const stopEvents = otel
      .spans()
      .flatMap((s) => s.events.map((e) => ({ span: s.name, name: e.name, attributes: e.attributes ?? {} })))
      .filter((e) => e.name === 'governor.breaker.escalation' && e.attributes['governor.breaker.action'] === 'stop');
    assert.equal(stopEvents.length, 1);
    assert.equal(stopEvents[0]!.span, 'advisor AgentBreaker');
    assert.equal(stopEvents[0]!.attributes['governor.breaker.category'], 'tool_spiral');
    assert.equal(stopEvents[0]!.attributes['governor.breaker.session_id'], 'stuck-1');

    const call = otel.span('chat_client mock-model-id');
    assert.equal(call.status.code, SpanStatusCode.ERROR);
    assert.equal(call.attributes['error.type'], 'ToolSpiralError');

    const escalations = (await otel.points('governor.breaker.escalations')).map((p) => [p.attributes, p.value]);
    assert.deepEqual(escalations, [
      [{ category: 'tool_spiral', action: 'steer' }, 1],
      [{ category: 'tool_spiral', action: 'block' }, 1],
      [{ category: 'tool_spiral', action: 'stop' }, 1],
    ]);
    const outcomes = (await otel.points('governor.tool.calls')).map((p) => `${String(p.attributes['governor.tool.outcome'])}=${p.value}`);
    assert.ok(outcomes.includes('blocked=1'), outcomes.join(', '));
    assert.deepEqual(
      (await otel.points('governor.breaker.open')).map((p) => p.value),
      [1],
    );
  });

  test("the breaker's evidence follows the call's own content setting, whatever the process default", async () => {
    const detailsWith = async (recordContent: boolean, environment: string | undefined): Promise<unknown[]> => {
      const saved = process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'];
      if (environment === undefined) delete process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'];
      else process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] = environment;
      try {
        await otel.uninstall();
        otel.install();
        const client = ChatClient.builder(mockModel(stuckOnStatus()))
          .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
          .defaultTools({ get_status: getStatus })
          .telemetry({ recordContent })
          .build();
        await assert.rejects(client.prompt('Is the build done?').call().content(), (e: unknown) => e instanceof ToolSpiralError);
        return otel
          .spans()
          .flatMap((span) => span.events)
          .filter((e) => e.name === 'governor.breaker.escalation')
          .map((e) => e.attributes?.['governor.breaker.detail']);
      } finally {
        if (saved === undefined) delete process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'];
        else process.env['OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'] = saved;
      }
    };
    const optedIn = await detailsWith(true, undefined);
    assert.equal(optedIn.length, 3);
    assert.ok(
      optedIn.every((detail) => typeof detail === 'string' && detail.includes('get_status')),
      'a client that records content records the evidence',
    );
    const optedOut = await detailsWith(false, 'true');
    assert.equal(optedOut.length, 3);
    assert.ok(
      optedOut.every((detail) => detail === undefined),
      'a client that does not record content keeps the evidence out, whatever the environment says',
    );
  });

  test("in stream() too, the breaker's escalations land on its own advisor span", async () => {
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
      .defaultTools({ get_status: getStatus })
      .build();
    await assert.rejects(async () => {
      for await (const _ of client.prompt('Is the build done?').stream().chatResponse());
    }, ToolSpiralError);
    const actions = otel
      .spans()
      .flatMap((s) =>
        s.events.filter((e) => e.name === 'governor.breaker.escalation').map((e) => `${s.name}: ${String(e.attributes?.['governor.breaker.action'])}`),
      );
    assert.deepEqual(actions, ['advisor AgentBreaker: steer', 'advisor AgentBreaker: block', 'advisor AgentBreaker: stop']);
    assert.equal(otel.span('chat_client mock-model-id').status.code, SpanStatusCode.ERROR);
  });

  test('a stop the recovery advisor turns into a retry is counted as the recover action', async () => {
    const breaker = new AgentBreaker();
    const turns = [...stuckOnStatus().slice(0, 5), { text: 'Still queued; I will stop polling.' }];
    const client = ChatClient.builder(mockModel(turns))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker, new BreakerRecoveryAdvisor({ breaker }))
      .defaultTools({ get_status: getStatus })
      .build();
    const text = await client
      .prompt('Is the build done?')
      .advisors((a) => a.param(CONVERSATION_ID, 'recover-1'))
      .call()
      .content();
    assert.equal(text, 'Still queued; I will stop polling.');
    const recovered = (await otel.points('governor.breaker.escalations')).filter((p) => p.attributes['action'] === 'recover');
    assert.deepEqual(
      recovered.map((p) => [p.attributes, p.value]),
      [[{ category: 'tool_spiral', action: 'recover' }, 1]],
    );
    const call = otel.span('chat_client mock-model-id');
    assert.ok(call.events.some((e) => e.name === 'governor.breaker.escalation' && e.attributes?.['governor.breaker.action'] === 'recover'));
  });

  test('a text-repetition stop says what repeated without quoting the reply; the quote reaches only the model and opted-in evidence', async () => {
    const sentence = 'Patient ZEBRA Jane Doe has diagnosis code F32 for depression.';
    const reply = `${sentence} ${sentence} ${sentence}`;
    const run = async (recordContent: boolean) => {
      await otel.uninstall();
      otel.install();
      const model = mockModel(Array.from({ length: 6 }, () => ({ text: reply })));
      const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker()).telemetry({ recordContent }).build();
      const errors: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        await client
          .prompt('Summarise the chart.')
          .advisors((a) => a.param(CONVERSATION_ID, 'chart-1'))
          .call()
          .content()
          .catch((error: unknown) => errors.push(error));
      }
      // A finish tool the model never calls: the loop asks it to go on, and it answers the same again.
      const looping = ChatClient.builder(mockModel(Array.from({ length: 6 }, () => ({ text: reply }))))
        .defaultTools({ submit: submitTool() })
        .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
        .telemetry({ recordContent })
        .build();
      const loop = await new AgentLoop({ client: looping, maxInvocations: 6 }).run('Summarise the chart.');
      return { model, errors, loop };
    };

    const { model, errors, loop } = await run(false);
    assert.ok(errors[0] instanceof TextRepetitionError, String(errors[0]));
    assert.match((errors[0] as Error).message, /text repetition — one sentence of the model's reply was repeated 3 times/);
    assert.ok(errors.slice(1).some((e) => e instanceof BreakerOpenError));
    for (const error of errors) assert.doesNotMatch(String((error as Error).message), /ZEBRA/);
    assert.equal(loop.status, 'stuck');
    assert.doesNotMatch(loop.reason ?? '', /ZEBRA/);
    const recorded = JSON.stringify(otel.spans().map((s) => [s.attributes, s.status, s.events]));
    assert.match(recorded, /text_repetition/);
    assert.doesNotMatch(recorded, /ZEBRA/, 'the reply leaked into span attributes, events or statuses');
    // The steer that came before the stop goes back to the model, quote and all: it is the model's own text.
    const prompts = JSON.stringify(model.doGenerateCalls.map((c) => c.prompt));
    assert.match(prompts, /repeating yourself \(one sentence of the reply is repeated 3 times: \\"Patient ZEBRA Jane Doe/);

    // Opted in, the evidence quotes the reply, as the other recorded content does.
    await run(true);
    const details = otel
      .spans()
      .flatMap((s) => s.events)
      .map((e) => e.attributes?.['governor.breaker.detail'])
      .filter((d) => d !== undefined);
    assert.ok(
      details.some((d) => String(d).includes('Patient ZEBRA Jane Doe')),
      JSON.stringify(details),
    );
  });

  test('a secret in the conversation id is masked on spans and breaker events, as in health()', async () => {
    const id = 'session-password=hunter2 ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
      .defaultTools({ get_status: getStatus })
      .build();
    const result = await new AgentLoop({ client, conversationId: id, maxInvocations: 12 }).run('Is the build done?');
    assert.equal(result.status, 'stuck');
    const ids = otel.spans().flatMap((s) => [s.attributes['gen_ai.conversation.id'], ...s.events.map((e) => e.attributes?.['governor.breaker.session_id'])]);
    assert.ok(ids.filter((v) => v !== undefined).length >= 5, JSON.stringify(ids));
    assert.ok(
      ids.filter((v) => v !== undefined).every((v) => String(v).startsWith('session-password=[REDACTED]')),
      JSON.stringify(ids),
    );
    assert.doesNotMatch(JSON.stringify(otel.spans().map((s) => [s.attributes, s.events])), /hunter2|ghp_abcdefghij/);
  });

  test('a Vertex AI model is labelled gcp.vertex_ai, not the Gemini Developer API', async () => {
    const inner = mockModel([{ text: 'Hello.', inputTokens: 3, outputTokens: 1 }]);
    const vertex = new MockLanguageModelV4({ provider: 'google.vertex.chat', modelId: 'gemini-2.5-pro', doGenerate: (options) => inner.doGenerate(options) });
    await ChatClient.builder(vertex).build().prompt('Hi').call().content();
    assert.equal(otel.span('chat gemini-2.5-pro').attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
    assert.equal(otel.span('chat_client gemini-2.5-pro').attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
    assert.deepEqual(
      (await otel.points('gen_ai.client.operation.duration')).map((p) => p.attributes['gen_ai.provider.name']),
      ['gcp.vertex_ai'],
    );
  });

  test('prompts, answers and tool arguments are not recorded by default', async () => {
    const client = ChatClient.builder(mockModel(twoRounds()))
      .defaultSystem('Secret system rules')
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ weather })
      .build();
    await client.prompt('my confidential question about Paris').call().content();
    assert.ok(otel.spans().length >= 4);
    const recorded = allAttributeText();
    for (const text of ['confidential question', 'Secret system rules', '15°C', 'It is 15°C in Paris', '"city"']) {
      assert.ok(!recorded.includes(text), `"${text}" leaked into telemetry`);
    }
    assert.ok(otel.spans().every((s) => !Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.input') || k.startsWith('gen_ai.output.messages'))));
  });

  test('recordContent records prompts, answers and tool calls in the GenAI shapes, with secrets redacted', async () => {
    const client = ChatClient.builder(mockModel(twoRounds()))
      .defaultSystem('Be brief.')
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ weather })
      .telemetry({ recordContent: true })
      .build();
    await client.prompt('Weather in Paris? my key is sk-proj-abcdefghijklmnop1234 and password=hunter22').call().content();
    const [first, second] = otel.spans().filter((s) => s.name === 'chat mock-model-id');
    const input = JSON.parse(String(first!.attributes['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ type: string; content?: string }> }>;
    assert.equal(input[0]!.role, 'user');
    assert.match(input[0]!.parts[0]!.content!, /^Weather in Paris\? my key is \[REDACTED\] and password=\[REDACTED\]$/);
    assert.deepEqual(JSON.parse(String(first!.attributes['gen_ai.system_instructions'])), [{ type: 'text', content: 'Be brief.' }]);
    assert.deepEqual(JSON.parse(String(first!.attributes['gen_ai.output.messages'])), [
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call-1', name: 'weather', arguments: { city: 'Paris' } }], finish_reason: 'tool_calls' },
    ]);
    assert.match(String(second!.attributes['gen_ai.output.messages']), /It is 15°C in Paris\./);
    const toolSpan = otel.span('execute_tool weather');
    assert.deepEqual(JSON.parse(String(toolSpan.attributes['gen_ai.tool.call.arguments'])), { city: 'Paris' });
    assert.equal(toolSpan.attributes['gen_ai.tool.call.result'], '15°C in Paris');
    assert.ok(!allAttributeText().includes('hunter22'));
    assert.ok(!allAttributeText().includes('abcdefghijklmnop1234'));
  });

  test('telemetry can be switched off per request with the TELEMETRY param; listeners still hear every call', async () => {
    const heard: string[] = [];
    const listener: ToolCallListener = { onToolCallEnd: (e) => heard.push(`${e.toolName} ${String(e.result)}`) };
    const client = ChatClient.builder(mockModel(twoRounds()))
      .defaultAdvisors(new ToolCallingAdvisor({ listeners: [listener] }))
      .defaultTools({ weather })
      .build();
    await client
      .prompt('Weather?')
      .advisors((a) => a.param(TELEMETRY, { enabled: false }))
      .call()
      .content();
    assert.deepEqual(heard, ['weather 15°C in Paris']);
    assert.deepEqual(otel.spans(), []);
    assert.deepEqual(await otel.points('gen_ai.client.token.usage'), []);
    assert.deepEqual(await otel.points('governor.tool.calls'), []);
  });

  test("a request's TELEMETRY param goes over the client's settings: it turns nothing back on that the client turned off", async () => {
    const client = (settings: TelemetryOptions) =>
      ChatClient.builder(mockModel(twoRounds())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).telemetry(settings).build();
    /** A request of `settings`' client that only lengthens what is recorded. */
    const longer = (settings: TelemetryOptions, prompt: string) =>
      client(settings)
        .prompt(prompt)
        .advisors((a) => a.param(TELEMETRY, { maxContentLength: 100_000 }))
        .call()
        .content();
    await longer({ enabled: false }, 'Weather?');
    assert.deepEqual(otel.spans(), [], 'still off');
    await longer({ recordContent: false }, 'my confidential question');
    assert.ok(otel.spans().length > 0);
    assert.ok(!allAttributeText().includes('confidential'), 'content still not recorded');
    await assert.rejects(
      client({})
        .prompt('x')
        .advisors((a) => a.param(TELEMETRY, false))
        .call()
        .content(),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'TELEMETRY',
    );
  });

  test('recorded messages longer than maxContentLength are cut inside their texts and stay JSON, the latest kept', async () => {
    const page = `${'line of the file\n'.repeat(1_200)}the end`;
    const reader = tool({ inputSchema: z.object({ path: z.string() }), execute: async () => page });
    const model = mockModel([{ toolCalls: [{ name: 'read', input: { path: 'a.txt' }, id: 'r1' }] }, { text: 'Read it.' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ read: reader })
      .telemetry({ recordContent: true, maxContentLength: 4_000 })
      .build();
    await client.prompt('Read a.txt').call().content();
    const second = otel.spans().filter((s) => s.name === 'chat mock-model-id')[1]!;
    const text = String(second.attributes['gen_ai.input.messages']);
    assert.ok(text.length <= 4_000, `${text.length} characters`);
    const messages = JSON.parse(text) as Array<{ role: string; parts: Array<{ type: string; content?: string; response?: unknown }> }>;
    assert.deepEqual(
      messages.map((m) => m.role),
      ['user', 'assistant', 'tool'],
    );
    assert.equal(messages[0]!.parts[0]!.content, 'Read a.txt', 'short texts are whole');
    assert.match(JSON.stringify(messages[2]), /line of the file.*more characters not recorded/);
    const spansBefore = otel.spans().length;
    // So short that the messages do not fit even with every text cut: the first ones go.
    const tight = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'read', input: { path: 'a.txt' }, id: 'r1' }] }, { text: 'Read it.' }]))
      .defaultAdvisors(new ToolCallingAdvisor())
      .defaultTools({ read: reader })
      .telemetry({ recordContent: true, maxContentLength: 300 })
      .build();
    await tight.prompt('Read a.txt').call().content();
    const cut = String(
      otel
        .spans()
        .slice(spansBefore)
        .filter((s) => s.name === 'chat mock-model-id')[1]!.attributes['gen_ai.input.messages'],
    );
    assert.ok(cut.length <= 300, `${cut.length} characters`);
    const kept = JSON.parse(cut) as Array<{ role: string }>;
    assert.equal(kept.at(-1)?.role, 'tool', 'the latest message is kept');
  });

  test('cost is counted in USD per model and rounds without a price are not', async () => {
    const client = ChatClient.builder(mockModel(twoRounds())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build();
    const prices = { 'mock-model-id': { inputPerMillion: 1_000_000, outputPerMillion: 2_000_000 } };
    const result = await new AgentLoop({ client, finishTool: null, prices }).run('Weather?');
    // (10 + 30) input tokens at $1 and (2 + 7) output tokens at $2.
    assert.equal(result.costUsd, 58);
    assert.deepEqual(
      (await otel.points('governor.cost')).map((p) => [p.attributes['gen_ai.request.model'], p.value]),
      [['mock-model-id', 58]],
    );
    assert.equal(otel.span('invoke_agent AgentLoop').attributes['governor.cost.usd'], 58);

    await ChatClient.builder(mockModel(twoRounds())).defaultAdvisors(new ToolCallingAdvisor()).defaultTools({ weather }).build().prompt('x').call().content();
    assert.deepEqual(
      (await otel.points('governor.cost')).map((p) => p.value),
      [58],
    );
  });

  test('a stuck AgentLoop ends with an error span and is counted by status', async () => {
    const client = ChatClient.builder(mockModel(stuckOnStatus()))
      .defaultAdvisors(new ToolCallingAdvisor(), new AgentBreaker())
      .defaultTools({ get_status: getStatus })
      .build();
    const result = await new AgentLoop({ client, name: 'poller', maxInvocations: 12 }).run('Wait for the build');
    assert.equal(result.status, 'stuck');
    assert.ok(result.error instanceof AgentBreakerError);
    const agent = otel.span('invoke_agent poller');
    assert.equal(agent.status.code, SpanStatusCode.ERROR);
    assert.equal(agent.attributes['error.type'], 'ToolSpiralError');
    assert.deepEqual(
      (await otel.points('governor.agent_loop.ends')).map((p) => [p.attributes, p.value]),
      [[{ 'governor.agent_loop.status': 'stuck', 'gen_ai.agent.name': 'poller' }, 1]],
    );
  });
});

describe('without an OpenTelemetry SDK', () => {
  test('nothing is recorded, and an SDK registered later receives what follows', async () => {
    await otel.uninstall();
    const breaker = new AgentBreaker();
    const client = ChatClient.builder(mockModel([...twoRounds(), ...twoRounds()]))
      .defaultAdvisors(new ToolCallingAdvisor(), breaker)
      .defaultTools({ weather })
      .build();
    assert.equal(await client.prompt('Weather?').call().content(), 'It is 15°C in Paris.');

    otel.install();
    try {
      assert.deepEqual(otel.spans(), []);
      assert.deepEqual(await otel.points('gen_ai.client.token.usage'), []);
      assert.deepEqual(await otel.points('governor.tool.calls'), []);

      // The same client, built before the SDK: instruments are looked up lazily.
      await client.prompt('Weather again?').call().content();
      assert.equal(otel.spans().filter((s) => s.name === 'chat mock-model-id').length, 2);
      assert.equal((await otel.points('governor.tool.calls')).length, 1);
      // Breakers built before the SDK still report to the open-breaker gauge.
      assert.equal((await otel.points('governor.breaker.open')).length, 1);
    } finally {
      await otel.uninstall();
    }
  });
});
