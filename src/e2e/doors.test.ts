/**
 * Every door the breaker has — the ChatClient advisor, the AI SDK
 * (`breakerForAiSdk`), LangChain (`governorMiddleware`) and the OpenAI Agents
 * SDK (`breakerForOpenAIAgents`) — runs the same table of loops and
 * look-alikes against the scripted stand-in model over real HTTP, each with
 * its framework's real OpenAI-compatible model class, and must reach the same
 * outcome: the same escalations, the same tools run, the same stop.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent, OpenAIProvider, tool as agentsTool } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, isStepCount, tool as aiTool, type ToolSet } from 'ai';
import { createAgent, tool as langchainTool } from 'langchain';
import { AgentBreaker, AgentBreakerError, ChatClient, CONVERSATION_ID, ToolCallAdvisor, breakerForAiSdk, type BreakerEventRecord } from '../index.ts';
import { governorMiddleware } from '../langchain/index.ts';
import { breakerForOpenAIAgents } from '../openai-agents/index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { DOOR_SCENARIOS, type DoorScenario, type ScenarioTool } from './door-scenarios.ts';
import { escalations } from './recorded-run.ts';

const SESSION = 'door-session';

interface Outcome {
  readonly error: unknown;
  readonly answer: string | undefined;
  readonly executions: Record<string, number>;
  readonly escalations: string[];
  /** Whether any request after the first told the model about the breaker. */
  readonly modelHeardBreaker: boolean;
  /** Breaker notes that one message of a request carried more than once. */
  readonly repeatedNotes: string[];
}

/** Notes (`[AgentBreaker] …`) that a single message of any request holds twice: each must reach the model once. */
function repeatedNotes(server: ScriptedModelServer): string[] {
  const repeated: string[] = [];
  for (const request of server.requests) {
    for (const message of request.body.messages) {
      // Up to the end of the text it is in (a JSON string's closing quote), without the blank lines between notes.
      const notes = JSON.stringify(message)
        .split('[AgentBreaker]')
        .slice(1)
        .map((note) =>
          note
            .replace(/(\\n)+/g, ' ')
            .replace(/".*$/s, '')
            .trim(),
        );
      repeated.push(...notes.filter((note, i) => notes.indexOf(note) !== i));
    }
  }
  return repeated;
}

type Door = (scenario: DoorScenario, server: ScriptedModelServer, breaker: AgentBreaker, run: Runner) => Promise<string | undefined>;

/** Executes scenario tools and counts their runs. */
class Runner {
  readonly executions: Record<string, number> = {};

  run(spec: ScenarioTool, args: unknown): string {
    const n = this.executions[spec.name] ?? 0;
    this.executions[spec.name] = n + 1;
    return spec.execute(args as Record<string, unknown>, n);
  }
}

function aiTools(scenario: DoorScenario, runner: Runner): ToolSet {
  return Object.fromEntries(
    scenario.tools.map((spec) => [
      spec.name,
      aiTool({ description: spec.description, inputSchema: spec.parameters, execute: async (args: unknown) => runner.run(spec, args) }),
    ]),
  );
}

const DOORS: Record<string, Door> = {
  ChatClient: async (scenario, server, breaker, runner) => {
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor(), breaker).defaultTools(aiTools(scenario, runner)).build();
    return client
      .prompt(scenario.prompt)
      .advisors((a) => a.param(CONVERSATION_ID, SESSION))
      .call()
      .content();
  },
  'AI SDK': async (scenario, server, breaker, runner) => {
    const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
    const result = await generateText({
      model: governed.model(scriptedModel(server)),
      tools: governed.tools(aiTools(scenario, runner)),
      stopWhen: [isStepCount(40), governed.stopWhen],
      prompt: scenario.prompt,
    });
    return result.text;
  },
  LangChain: async (scenario, server, breaker, runner) => {
    const model = new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
    const tools = scenario.tools.map((spec) =>
      langchainTool(async (args: unknown) => runner.run(spec, args), { name: spec.name, description: spec.description, schema: spec.parameters }),
    );
    const agent = createAgent({ model, tools, middleware: [governorMiddleware(breaker, { sessionId: SESSION })] });
    const result = await agent.invoke({ messages: [{ role: 'user', content: scenario.prompt }] }, { recursionLimit: 200 });
    const last = result.messages.at(-1);
    return typeof last?.content === 'string' ? last.content : undefined;
  },
  'OpenAI Agents': async (scenario, server, breaker, runner) => {
    const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
    const door = breakerForOpenAIAgents(breaker, { sessionId: SESSION, runConfig: { modelProvider, tracingDisabled: true } });
    const tools = scenario.tools.map((spec) =>
      agentsTool({
        name: spec.name,
        description: spec.description,
        parameters: spec.parameters,
        // The SDK's default error text hides the error; pass it on as the other doors do.
        errorFunction: (_context, error) => String(error),
        execute: async (args: unknown) => runner.run(spec, args),
      }),
    );
    const agent = new Agent({ name: 'assistant', model: server.modelId, tools: door.tools(tools) });
    const result = await door.run(agent, scenario.prompt, { maxTurns: 40 });
    return typeof result.finalOutput === 'string' ? result.finalOutput : undefined;
  },
};

async function runThrough(door: Door, scenario: DoorScenario): Promise<Outcome> {
  await using server = await new ScriptedModelServer({
    script: scenario.script,
    ...(scenario.modelId === undefined ? {} : { modelId: scenario.modelId }),
  }).start();
  const breaker = new AgentBreaker({ telemetry: false, ...scenario.breaker });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const runner = new Runner();
  let answer: string | undefined;
  let error: unknown;
  try {
    answer = await door(scenario, server, breaker, runner);
  } catch (e) {
    error = e;
  }
  return {
    error,
    answer,
    executions: runner.executions,
    escalations: escalations(events),
    modelHeardBreaker: server.requests.some((r) => JSON.stringify(r.body.messages).includes('[AgentBreaker]')),
    repeatedNotes: repeatedNotes(server),
  };
}

for (const scenario of DOOR_SCENARIOS) {
  describe(`${scenario.kind}: ${scenario.name}`, () => {
    const reference: { outcome?: Outcome } = {};

    for (const [name, door] of Object.entries(DOORS)) {
      test(`through ${name}`, async () => {
        const outcome = await runThrough(door, scenario);
        if (scenario.kind === 'loop') {
          assert.ok(AgentBreakerError.isInstance(outcome.error), `the run ends with the breaker's error, got ${String(outcome.error)}`);
          assert.equal(outcome.escalations[0]?.split(':')[0], scenario.detects, 'the breaker sees the loop for what it is');
          assert.equal(outcome.escalations.at(-1), `${outcome.error.category}:stop`, 'the error is the stop the breaker decided');
          if (scenario.stops !== undefined) assert.equal(outcome.error.category, scenario.stops);
          assert.ok(outcome.modelHeardBreaker, 'the model was steered (or blocked) before the stop');
        } else {
          assert.equal(outcome.error, undefined, `the run ends normally, got ${String(outcome.error)}`);
          assert.equal(outcome.answer, scenario.answer);
          assert.deepEqual(outcome.escalations, []);
          assert.equal(outcome.modelHeardBreaker, false, 'the model never hears from the breaker');
        }
        if (scenario.executions !== undefined) assert.deepEqual(outcome.executions, scenario.executions, 'the same tools ran as often as the table says');
        assert.deepEqual(outcome.repeatedNotes, [], 'each breaker note reaches the model once');
        // ChatClient runs first: every other door must match it step for step.
        if (reference.outcome === undefined) {
          reference.outcome = outcome;
        } else {
          assert.deepEqual(outcome.escalations, reference.outcome.escalations, 'the same escalations as through the ChatClient');
          assert.equal((outcome.error as Error | undefined)?.name, (reference.outcome.error as Error | undefined)?.name, 'the same error class');
          assert.deepEqual(outcome.executions, reference.outcome.executions, 'the same tools ran as often');
        }
      });
    }
  });
}

/**
 * One conversation of many turns, each a new question that checks the same
 * build once and answers: every turn is new information from the user, so
 * no door may take the checks for a loop.
 */
describe('a conversation of many turns, each checking the same build once', () => {
  const QUESTIONS = ['Is build b-17 done?', 'Did it pass lint?', 'Who started it?', 'How long did it take?', 'Can I deploy it now?', 'Any flaky tests?'];
  const script = (request: { body: { messages: { role: string }[] } }) =>
    request.body.messages.at(-1)?.role === 'tool'
      ? { text: 'Build b-17 is running.' }
      : { toolCalls: [{ name: 'check_build', arguments: { buildId: 'b-17' } }] };
  const spec: ScenarioTool = {
    name: 'check_build',
    description: 'Status of a CI build',
    parameters: DOOR_SCENARIOS[0]!.tools[0]!.parameters,
    execute: () => 'build b-17: running',
  };
  const scenario = { tools: [spec] } as unknown as DoorScenario;
  type Conversation = (server: ScriptedModelServer, breaker: AgentBreaker, runner: Runner) => Promise<string[]>;
  const conversations: Record<string, Conversation> = {
    ChatClient: async (server, breaker, runner) => {
      const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor(), breaker).defaultTools(aiTools(scenario, runner)).build();
      const answers: string[] = [];
      for (const q of QUESTIONS)
        answers.push(
          await client
            .prompt(q)
            .advisors((a) => a.param(CONVERSATION_ID, SESSION))
            .call()
            .content(),
        );
      return answers;
    },
    'AI SDK': async (server, breaker, runner) => {
      // One governed object for the whole conversation, as the README shows.
      const governed = breakerForAiSdk(breaker, { sessionId: SESSION });
      const answers: string[] = [];
      for (const q of QUESTIONS) {
        const result = await generateText({
          model: governed.model(scriptedModel(server)),
          tools: governed.tools(aiTools(scenario, runner)),
          stopWhen: [isStepCount(10), governed.stopWhen],
          prompt: q,
        });
        answers.push(result.text);
      }
      return answers;
    },
    LangChain: async (server, breaker, runner) => {
      const model = new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
      const tools = [
        langchainTool(async (args: unknown) => runner.run(spec, args), { name: spec.name, description: spec.description, schema: spec.parameters }),
      ];
      const agent = createAgent({ model, tools, middleware: [governorMiddleware(breaker, { sessionId: SESSION })] });
      const answers: string[] = [];
      for (const q of QUESTIONS) {
        const result = await agent.invoke({ messages: [{ role: 'user', content: q }] });
        answers.push(String(result.messages.at(-1)?.content));
      }
      return answers;
    },
    'OpenAI Agents': async (server, breaker, runner) => {
      const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
      const door = breakerForOpenAIAgents(breaker, { sessionId: SESSION, runConfig: { modelProvider, tracingDisabled: true } });
      const tool = agentsTool({
        name: spec.name,
        description: spec.description,
        parameters: spec.parameters,
        execute: async (args: unknown) => runner.run(spec, args),
      });
      const agent = new Agent({ name: 'assistant', model: server.modelId, tools: door.tools([tool]) });
      const answers: string[] = [];
      for (const q of QUESTIONS) answers.push(String((await door.run(agent, q)).finalOutput));
      return answers;
    },
  };
  for (const [name, converse] of Object.entries(conversations)) {
    test(`through ${name}`, async () => {
      await using server = await new ScriptedModelServer({ script }).start();
      const breaker = new AgentBreaker({ telemetry: false });
      const events: BreakerEventRecord[] = [];
      breaker.on((event) => events.push(event));
      const runner = new Runner();
      const answers = await converse(server, breaker, runner);
      assert.deepEqual(
        answers,
        QUESTIONS.map(() => 'Build b-17 is running.'),
      );
      assert.deepEqual(escalations(events), []);
      assert.deepEqual(runner.executions, { check_build: QUESTIONS.length });
    });
  }
});
