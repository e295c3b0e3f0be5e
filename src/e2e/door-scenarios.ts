/**
 * One table of loops and their look-alikes, each a scripted model plus the
 * tools it calls, to be run through every door the breaker has (ChatClient,
 * AI SDK, LangChain, OpenAI Agents SDK) with the same expected outcome.
 */
import { z } from 'zod';
import type { BreakerCategory } from '../breaker/breaker-decision.ts';
import type { AgentBreakerOptions } from '../breaker/breaker-options.ts';
import type { ScriptFunction } from '../testing/index.ts';

/** A tool as the scenarios describe it; each door wraps it in its framework's tool type. */
export interface ScenarioTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: z.ZodObject<z.ZodRawShape>;
  /** The result of the `run`-th execution (0-based, counted per tool); throws to fail. */
  readonly execute: (args: Record<string, unknown>, run: number) => string;
}

export interface DoorScenario {
  readonly name: string;
  /** A loop the breaker must stop, or a look-alike it must leave alone. */
  readonly kind: 'loop' | 'look-alike';
  readonly prompt: string;
  readonly script: ScriptFunction;
  readonly tools: readonly ScenarioTool[];
  /** Breaker options, when the scenario needs other than the defaults. */
  readonly breaker?: AgentBreakerOptions;
  /** The id the stand-in model answers under, when the scenario needs a priced one. */
  readonly modelId?: string;
  /** What the breaker sees first, for loops (the category of the first escalation). */
  readonly detects?: BreakerCategory;
  /** Category of the stop, where the table pins it. */
  readonly stops?: BreakerCategory;
  /** The model's last text, for look-alikes that run to the end. */
  readonly answer?: string;
  /** Executions per tool when the run ends (blocked and stopped calls never run), where the table pins them. */
  readonly executions?: Readonly<Record<string, number>>;
}

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const toolResults = (request: Parameters<ScriptFunction>[0]) => request.body.messages.filter((m) => m.role === 'tool');
const lastToolResult = (request: Parameters<ScriptFunction>[0]) => String(toolResults(request).at(-1)?.content ?? '');

const checkBuild = (status: (run: number) => string): ScenarioTool => ({
  name: 'check_build',
  description: 'Status of a CI build',
  parameters: z.object({ buildId: z.string() }),
  execute: (args, run) => `build ${String(args['buildId'])}: ${status(run)}`,
});

/** A file read that brings new source each time: useful work. */
const readSource: ScenarioTool = {
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: (args) => `// ${String(args['path'])}\nexport const name = ${JSON.stringify(args['path'])};`,
};

const POLL_STATUSES = ['queued', 'running 10%', 'running 35%', 'running 60%', 'running 85%', 'succeeded'];

export const DOOR_SCENARIOS: readonly DoorScenario[] = [
  {
    name: 'the same status check, same answer, again and again',
    kind: 'loop',
    prompt: 'Is build b-17 done?',
    script: () => call('check_build', { buildId: 'b-17' }),
    tools: [checkBuild(() => 'running')],
    detects: 'tool_spiral',
    stops: 'tool_spiral',
    executions: { check_build: 3 },
  },
  {
    name: 'polling the same status while it changes',
    kind: 'look-alike',
    prompt: 'Wait for build b-17.',
    script: (request) => (lastToolResult(request).endsWith('succeeded') ? { text: 'Build b-17 succeeded.' } : call('check_build', { buildId: 'b-17' })),
    tools: [checkBuild((run) => POLL_STATUSES[run] ?? 'unknown')],
    answer: 'Build b-17 succeeded.',
    executions: { check_build: POLL_STATUSES.length },
  },
  {
    name: 'paging through orders, new data on every page',
    kind: 'look-alike',
    prompt: 'List all orders of c-9.',
    script: (request) => {
      const page = toolResults(request).length + 1;
      return page <= 6 ? call('list_orders', { customer: 'c-9', page }) : { text: 'c-9 has 12 orders.' };
    },
    tools: [
      {
        name: 'list_orders',
        description: 'One page of a customer’s orders',
        parameters: z.object({ customer: z.string(), page: z.number().int() }),
        execute: (args) => {
          const page = Number(args['page']);
          return JSON.stringify({ page, orders: [`o-${page * 2 - 1}`, `o-${page * 2}`], more: page < 6 });
        },
      },
    ],
    answer: 'c-9 has 12 orders.',
    executions: { list_orders: 6 },
  },
  {
    name: 'reading different files one after another',
    kind: 'look-alike',
    prompt: 'Read the sources.',
    script: (request) => {
      const n = toolResults(request).length;
      return n < 6 ? call('read_file', { path: `src/module-${n + 1}.ts` }) : { text: 'Read six files.' };
    },
    tools: [readSource],
    answer: 'Read six files.',
    executions: { read_file: 6 },
  },
  {
    name: 'two files opened in turn, unchanged',
    kind: 'loop',
    prompt: 'Which port does the service use?',
    script: (request) => call('open_file', { path: toolResults(request).length % 2 === 0 ? 'config.yaml' : 'defaults.yaml' }),
    tools: [
      {
        name: 'open_file',
        description: 'Open a file',
        parameters: z.object({ path: z.string() }),
        execute: (args) => (args['path'] === 'config.yaml' ? 'port: 80' : 'port: 8080'),
      },
    ],
    detects: 'cycle',
  },
  {
    name: 'the same payment failing the same way',
    kind: 'loop',
    prompt: 'Pay invoice i-4.',
    script: () => call('pay_invoice', { invoice: 'i-4', amount: 120 }),
    tools: [
      {
        name: 'pay_invoice',
        description: 'Pay an invoice',
        parameters: z.object({ invoice: z.string(), amount: z.number() }),
        execute: () => {
          throw new Error('payment declined: amount does not match the invoice total');
        },
      },
    ],
    detects: 'error_loop',
    stops: 'error_loop',
    executions: { pay_invoice: 3 },
  },
  {
    name: 'useful work that spends the whole token budget',
    kind: 'loop',
    prompt: 'Read the sources.',
    // 310 tokens a round: the wrap-up is decided at a model gate, between rounds, as well as on a round.
    breaker: { budget: { maxTokens: 1000 } },
    script: (request) => ({
      ...call('read_file', { path: `src/part-${toolResults(request).length + 1}.ts` }),
      usage: { promptTokens: 300, completionTokens: 10 },
    }),
    tools: [readSource],
    detects: 'budget',
    stops: 'budget',
  },
  {
    name: 'a context that doubles every round',
    kind: 'loop',
    prompt: 'Summarise the logs.',
    script: (request) => {
      const n = toolResults(request).length;
      return { ...call('read_log', { part: n + 1 }), usage: { promptTokens: 1000 * 2 ** n, completionTokens: 50 } };
    },
    tools: [
      {
        name: 'read_log',
        description: 'Read a part of the logs',
        parameters: z.object({ part: z.number().int() }),
        execute: (args) => `log part ${String(args['part'])}: ${'line '.repeat(20)}`,
      },
    ],
    detects: 'token_drift',
  },
  {
    name: 'useful work that spends the whole cost budget (a priced model)',
    kind: 'loop',
    prompt: 'Read the sources.',
    // gpt-4o: 100,000 input and 1,000 output tokens a round cost about $0.26, so $1 is spent in the 4th round.
    modelId: 'gpt-4o',
    breaker: { budget: { maxCostUsd: 1 } },
    script: (request) => ({
      ...call('read_file', { path: `src/part-${toolResults(request).length + 1}.ts` }),
      usage: { promptTokens: 100_000, completionTokens: 1_000 },
    }),
    tools: [readSource],
    detects: 'budget',
    stops: 'budget',
  },
  {
    name: 'the model stuck repeating one sentence in its replies',
    kind: 'loop',
    prompt: 'Fix the failing test.',
    script: (request) => ({
      text: 'I will look at the test again. '.repeat(4).trim(),
      ...call('read_file', { path: `test/case-${toolResults(request).length + 1}.ts` }),
    }),
    tools: [
      {
        name: 'read_file',
        description: 'Read a file',
        parameters: z.object({ path: z.string() }),
        execute: (args) => `// ${String(args['path'])}\nassert.equal(total, ${String(args['path']).length});`,
      },
    ],
    detects: 'text_repetition',
  },
];
