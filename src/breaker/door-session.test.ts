/**
 * A sub-agent run inside a governed tool call of the lead's session, through
 * every door (`DoorSession.runTool`): a stop decided while it runs reaches
 * the lead's caller as the category's error, not as the open breaker's, and
 * the lead's model is not called again; a steer reaches the agent whose round
 * or call it was decided on. Each door with the sub-agent on the lead's own
 * door and on one of its own. The real AI SDK (`generateText`), LangChain
 * (`createAgent`, `ChatOpenAI`) and Agents SDK (its `Runner`, `agent.asTool()`)
 * over real HTTP against the scripted stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Agent, OpenAIProvider } from '@openai/agents';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, isStepCount, streamText, tool as aiTool } from 'ai';
import { createAgent, tool as lcTool } from 'langchain';
import { z } from 'zod';
import { AgentBreaker, breakerForAiSdk, ErrorLoopError, TokenDriftError, type BreakerEventRecord } from '../index.ts';
import { governorMiddleware } from '../langchain/index.ts';
import { breakerForOpenAIAgents, type GovernedRunStop } from '../openai-agents/index.ts';
import { escalations } from '../e2e/recorded-run.ts';
import { type RecordedRequest, ScriptedModelServer, type ScriptedTurn, scriptedModel } from '../testing/index.ts';
import { compoundingLeadServer } from './test-support/compounding-lead.ts';
import { assertResearcherSteerStayed, DELEGATE, hasSteer, isLead, RESEARCHER_PROMPTS, researcherSteerCase } from '../test-support/sub-agent-steers.ts';

/** The lead's one tool, which runs the researcher on the task the lead wrote. */

/** How a door's lead reaches its researcher. */
const VARIANTS = [
  { door: 'AI SDK', sharing: "on the lead's door" },
  { door: 'AI SDK', sharing: 'on a door of its own' },
  { door: 'AI SDK', sharing: 'on a door of its own, its failure answered as text' },
  { door: 'AI SDK', sharing: "on the streaming lead's door" },
  { door: 'LangChain', sharing: "on the lead's middleware" },
  { door: 'LangChain', sharing: 'on a middleware of its own' },
  { door: 'Agents SDK', sharing: 'as agent.asTool()' },
  { door: 'Agents SDK', sharing: 'on governed.run in a tool' },
] as const;
type Variant = (typeof VARIANTS)[number];

/** The name of the lead tool's one argument (`input` for an Agents SDK agent tool, `task` elsewhere). */
function taskArgument(request: RecordedRequest): string {
  const tool = ((request.body.tools ?? []) as { function?: { name?: string; parameters?: { properties?: object } } }[]).find(
    (t) => t.function?.name === DELEGATE,
  );
  return Object.keys(tool?.function?.parameters?.properties ?? { task: true })[0]!;
}

/**
 * Runs `variant`'s lead, which has one tool (`research`) that runs the
 * researcher, whose one tool is `get_invoice`; both on `server`'s model.
 * What the lead's run threw, or undefined.
 */
async function runLead(variant: Variant, server: ScriptedModelServer, breaker: AgentBreaker, sessionId: string, getInvoice: (id: string) => Promise<string>) {
  const own = variant.sharing.startsWith('on a door of its own') || variant.sharing === 'on a middleware of its own';
  const prompt = 'What does invoice inv-9 come to?';
  const invoiceSchema = z.object({ id: z.string() });
  const taskSchema = z.object({ task: z.string() });
  const settled = (run: Promise<unknown>) =>
    run.then(
      () => undefined,
      (error: unknown) => error,
    );
  if (variant.door === 'AI SDK') {
    const governed = breakerForAiSdk(breaker, { sessionId });
    const model = governed.model(scriptedModel(server));
    const research = aiTool({
      inputSchema: taskSchema,
      execute: async ({ task }) => {
        // A door of its own for the lead's session, as a sub-agent handed the session id builds.
        const door = own ? breakerForAiSdk(breaker, { sessionId }) : governed;
        const tools = door.tools({ get_invoice: aiTool({ inputSchema: invoiceSchema, execute: ({ id }) => getInvoice(id) }) });
        const run = generateText({ model: own ? door.model(scriptedModel(server)) : model, tools, stopWhen: isStepCount(10), prompt: task });
        // The lead's model reads what went wrong, as a tool that keeps its run going answers a failure.
        if (variant.sharing.endsWith('answered as text'))
          return run.then(
            (result) => result.text,
            (error: unknown) => `The research failed: ${String(error)}`,
          );
        return (await run).text;
      },
    });
    const lead = { model, tools: governed.tools({ [DELEGATE]: research }), stopWhen: [isStepCount(12), governed.stopWhen], prompt };
    if (variant.sharing !== "on the streaming lead's door") return settled(generateText(lead));
    // The lead's round is recorded when its stream finishes, which its tool call comes before.
    return settled(
      (async () => {
        for await (const part of streamText({ ...lead, onError: () => {} }).fullStream) if (part.type === 'error') throw part.error;
      })(),
    );
  }
  if (variant.door === 'LangChain') {
    const chat = () => new ChatOpenAI({ model: server.modelId, apiKey: 'test-key', maxRetries: 0, configuration: { baseURL: server.baseURL } });
    const middleware = governorMiddleware(breaker);
    const invoice = lcTool(({ id }) => getInvoice(id), { name: 'get_invoice', description: 'Reads an invoice', schema: invoiceSchema });
    const researcher = createAgent({ model: chat(), tools: [invoice], middleware: [own ? governorMiddleware(breaker) : middleware] });
    const research = lcTool(
      async ({ task }, config: { configurable?: { thread_id?: unknown } }) => {
        const handed = { configurable: { thread_id: config.configurable?.thread_id }, recursionLimit: 30 };
        const { messages } = await researcher.invoke({ messages: [{ role: 'user', content: task }] }, handed);
        return String(messages.at(-1)?.content ?? '');
      },
      { name: DELEGATE, description: 'Researches a task', schema: taskSchema },
    );
    const lead = createAgent({ model: chat(), tools: [research], middleware: [middleware] });
    return settled(lead.invoke({ messages: [{ role: 'user', content: prompt }] }, { configurable: { thread_id: sessionId }, recursionLimit: 40 }));
  }
  const modelProvider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.baseURL, useResponses: false });
  const door = breakerForOpenAIAgents(breaker, { sessionId, runConfig: { modelProvider, tracingDisabled: true } });
  const invoice = door.tool({ name: 'get_invoice', description: 'Reads an invoice', parameters: invoiceSchema, execute: ({ id }) => getInvoice(id) });
  const researcher = new Agent({ name: 'researcher', model: server.modelId, tools: [invoice] });
  const research =
    variant.sharing === 'as agent.asTool()'
      ? researcher.asTool({ toolName: DELEGATE, toolDescription: 'Researches a task' })
      : door.tool({
          name: DELEGATE,
          description: 'Researches a task',
          parameters: taskSchema,
          execute: async ({ task }) => String((await door.run(researcher, task, { maxTurns: 10 })).finalOutput ?? ''),
        });
  const lead = new Agent({ name: 'lead', model: server.modelId, tools: door.tools([research]) });
  return settled(door.run(lead, prompt, { maxTurns: 12 }));
}

function recordingBreaker() {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  return { breaker, events };
}

describe("a stop decided while a sub-agent runs reaches the lead's caller as the category's error", () => {
  for (const variant of VARIANTS) {
    test(`${variant.door}, the researcher ${variant.sharing}: its own error loop ends the lead's run with ErrorLoopError, and the lead's model is not called again`, async () => {
      // The lead delegates once and would answer once it has the researcher's answer; the researcher asks for the same invoice until stopped.
      await using server = await new ScriptedModelServer({
        script: (request): ScriptedTurn => {
          if (!isLead(request)) return { toolCalls: [{ name: 'get_invoice', arguments: { id: 'inv-9' } }] };
          if (request.body.messages.some((m) => m.role === 'tool')) return { text: 'Invoice inv-9 could not be read.' };
          return { toolCalls: [{ name: DELEGATE, arguments: { [taskArgument(request)]: 'Find invoice inv-9.' } }] };
        },
      }).start();
      const sessionId = `door-sub-stop-${variant.door}-${variant.sharing}`;
      const { breaker, events } = recordingBreaker();
      let attempts = 0;
      const error = await runLead(variant, server, breaker, sessionId, async () => {
        attempts += 1;
        throw new Error('invoice not found');
      });

      assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
      assert.equal(error.sessionId, sessionId);
      assert.equal(error.evidence?.['tool'], 'get_invoice', 'with the evidence of the loop');
      assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
      assert.equal(attempts, 3, 'the 3rd attempt ran steered; the 4th was blocked, the 5th stopped');
      assert.equal(server.requests.filter(isLead).length, 1, "the lead's model is not called after the stop");
      if (variant.door === 'Agents SDK') {
        // The stop carries the state of the run it ends, the lead's, to be read or resumed.
        const { state } = error as GovernedRunStop;
        assert.equal(state?.currentAgent.name, 'lead');
        assert.partialDeepStrictEqual(state.history[0], { role: 'user', content: 'What does invoice inv-9 come to?' });
      }
    });
  }
});

describe('a steer reaches the agent whose round it was decided on', () => {
  for (const variant of VARIANTS) {
    test(`${variant.door}, the researcher ${variant.sharing}: token drift on the lead's rounds steers the lead's next call, not the researcher's`, async () => {
      // The lead's context compounds; it delegates in every round, and the researcher answers at once.
      await using server = await compoundingLeadServer(variant.sharing === 'as agent.asTool()' ? 'input' : 'task');
      const sessionId = `door-lead-steer-${variant.door}-${variant.sharing}`;
      const { breaker, events } = recordingBreaker();
      const error = await runLead(variant, server, breaker, sessionId, async () => assert.fail('the researcher calls no tool here'));

      assert.ok(TokenDriftError.isInstance(error), `expected TokenDriftError, got ${String(error)}`);
      assert.deepEqual(escalations(events), ['token_drift:steer', 'token_drift:stop']);
      const leads = server.requests.filter(isLead);
      assert.equal(leads.length, 5);
      assert.ok(!leads.slice(0, 4).some(hasSteer), 'steered only after the 4th round');
      assert.ok(hasSteer(leads[4]!), "the lead's 5th call carries the steer decided on its 4th round");
      if (variant.door === 'LangChain') {
        // LangChain's lead reads it on the delegation's result too; the note for the model's next call is what a sub-agent took.
        assert.partialDeepStrictEqual(leads[4]!.body.messages[0], { role: 'system' });
        assert.match(String(leads[4]!.body.messages[0]!.content), /^\[AgentBreaker\] /);
      }
      assert.deepEqual(
        server.requests.filter((r) => !isLead(r)).filter(hasSteer),
        [],
        'no call of the researcher carries it: the researcher, running between the two, is not the one whose context grows',
      );
    });
  }

  for (const variant of VARIANTS) {
    for (const rounds of [4, 5] as const) {
      const what = researcherSteerCase(rounds);
      test(`${variant.door}, the researcher ${variant.sharing}: ${what}`, async () => {
        await using server = await new ScriptedModelServer({
          script: (request): ScriptedTurn => {
            const round = request.body.messages.filter((m) => m.role === 'tool').length;
            if (isLead(request)) {
              if (round > 0) return { text: 'Invoice inv-9 comes to 120 EUR.', usage: { promptTokens: 900, completionTokens: 20 } };
              return {
                toolCalls: [{ name: DELEGATE, arguments: { [taskArgument(request)]: 'Find invoice inv-9.' } }],
                usage: { promptTokens: 800, completionTokens: 20 },
              };
            }
            const usage = { promptTokens: RESEARCHER_PROMPTS[round] ?? 1_000, completionTokens: 20 };
            // Its last round answers; before it, each reads another page of the invoice.
            if (round === rounds - 1) return { text: 'inv-9 comes to 120 EUR.', usage };
            return { toolCalls: [{ name: 'get_invoice', arguments: { id: `inv-9/page-${round + 1}` } }], usage };
          },
        }).start();
        const sessionId = `door-sub-steer-${variant.door}-${variant.sharing}-${rounds}`;
        const { breaker, events } = recordingBreaker();
        const error = await runLead(variant, server, breaker, sessionId, async (id) => `${id}: line items of invoice inv-9`);

        assert.equal(error, undefined, `the run ends with an answer, not ${String(error)}`);
        assert.deepEqual(escalations(events), ['token_drift:steer']);
        assertResearcherSteerStayed(server.requests, rounds);
      });
    }
  }
});
