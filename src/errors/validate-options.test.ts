/**
 * The table of options × bad values: every public class refuses each wrong
 * value at construction with an InvalidOptionError naming the option, never
 * an untyped TypeError and never by accepting it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { tool as agentsTool } from '@openai/agents';
import { z } from 'zod';
import {
  AgentBreaker,
  AgentLoop,
  breakerForAiSdk,
  BreakerRecoveryAdvisor,
  CharsPerTokenEstimator,
  ChatClient,
  InMemoryBreakerStore,
  InMemoryVectorStore,
  InvalidOptionError,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  MiniAgent,
  PromptChatMemoryAdvisor,
  QuestionAnswerAdvisor,
  SafeGuardAdvisor,
  SimpleLoggerAdvisor,
  StructuredOutputValidationAdvisor,
  TokenBudgetAdvisor,
  TokenWindowChatMemory,
  ToolCallAdvisor,
} from '../index.ts';
import { checkCommandWrites, commandJudge, fileContainsJudge, fileExistsJudge, Jury, llmJudge, runCommand, shellTool } from '../harness/index.ts';
import { governorMiddleware } from '../langchain/index.ts';
import { startMcpProxy } from '../mcp-proxy/index.ts';
import { breakerForOpenAIAgents } from '../openai-agents/index.ts';
import { PgVectorStore, PostgresChatMemoryRepository } from '../postgres/index.ts';
import { createModelProxy, startModelProxy } from '../proxy/index.ts';
import { renderHtmlReport, ReplaySummaryBuilder } from '../replay/index.ts';
import { aiSdkEmbedder, LexicalHashEmbedding } from '../rag/index.ts';
import { health, healthHandler } from '../telemetry/index.ts';
import { RedisBreakerStore, RedisChatMemoryRepository } from '../redis/index.ts';
import { SqliteChatMemoryRepository } from '../sqlite/index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { describeValue, MAX_TIMER_MS } from './validate-options.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'governor-options-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const model = mockModel([]);
const client = ChatClient.create(model);
const memory = new MessageWindowChatMemory();
const vectorStore = new InMemoryVectorStore();
const redisClient = { sendCommand: async () => null };
const breaker = new AgentBreaker();

type Options = Record<string, unknown>;
/** One class: how to build it from options, options it accepts, and bad values by option. */
interface Row {
  readonly name: string;
  readonly make: (options: Options) => unknown;
  readonly valid: Options;
  /** [option path, bad value]; the value replaces (or adds) the top-level key of the path. */
  readonly bad: ReadonlyArray<readonly [string, unknown]>;
  /** Build the valid options once to prove the row's baseline is accepted (off for network stores). */
  readonly checkValid?: boolean;
}

const TIME = (option: string): Array<readonly [string, unknown]> => [
  [option, -1],
  [option, 0],
  [option, Number.NaN],
  [option, Infinity],
  [option, 2 ** 31],
  [option, '1000'],
];
const COUNT = (option: string): Array<readonly [string, unknown]> => [
  [option, 0],
  [option, -3],
  [option, 1.5],
  [option, Number.NaN],
  [option, Infinity],
  [option, '5'],
];
const UNKNOWN: readonly [string, unknown] = ['notAnOption', 1];
const ORDER: Array<readonly [string, unknown]> = [
  ['order', Number.NaN],
  ['order', '1'],
];

const TABLE: readonly Row[] = [
  {
    name: 'AgentLoop',
    make: (o) => new AgentLoop(o as never),
    valid: { client },
    bad: [
      ...COUNT('maxInvocations'),
      ...TIME('timeoutMs'),
      ['costLimitUsd', 0],
      ['costLimitUsd', -1],
      ['costLimitUsd', Infinity],
      ['finishTool', ''],
      ['finishTool', 3],
      ['onProgress', 'log'],
      ['abortSignal', {}],
      ['conversationId', ''],
      ['name', '  '],
      ['modelId', 7],
      ['listeners', {}],
      ['client', { not: 'a client' }],
      ['telemetry.enabled', 'yes'],
      ['telemetry.maxContentLength', 0],
      ['telemetry.priceModelId', ''],
      ['telemetry.enable', false],
      UNKNOWN,
      ['timeout', 1000],
    ],
  },
  {
    name: 'MiniAgent',
    make: (o) => new MiniAgent(o as never),
    valid: { model, workingDirectory: dir, breaker: false },
    bad: [
      ['workingDirectory', ''],
      ['workingDirectory', 42],
      ...TIME('commandTimeoutMs'),
      ...TIME('toolTimeoutMs'),
      ...COUNT('maxInvocations'),
      ...TIME('timeoutMs'),
      ['costLimitUsd', -2],
      ['breaker', true],
      ['breaker', {}],
      ['onProgress', 1],
      UNKNOWN,
      ['commandTimeout', 5],
    ],
  },
  {
    name: 'shellTool',
    make: (o) => shellTool(o as never),
    valid: { workingDirectory: dir, sandbox: 'none' },
    bad: [
      ['workingDirectory', ''],
      ['workingDirectory', 7],
      ...TIME('commandTimeoutMs'),
      ['maxOutputBytes', 1],
      ['maxOutputBytes', Infinity],
      ['sandbox', 'docker'],
      ['network', 'yes'],
      ['passEnv', 'none'],
      ['env.HOME', 5],
      ['writableRoots', '/tmp'],
      ['writableRoots[0]', ''],
      ['killGraceMs', -1],
      ['killGraceMs', Number.NaN],
      UNKNOWN,
      ['timeoutMs', 1000],
    ],
  },
  {
    name: 'runCommand',
    make: (o) => runCommand('true', o as never),
    valid: { cwd: dir, env: {}, timeoutMs: 1000, maxOutputBytes: 100 },
    checkValid: false,
    bad: [['cwd', ''], ['env.PATH', 1], ...TIME('timeoutMs'), ['maxOutputBytes', 1], ['killGraceMs', -1], ['signal', {}], ['launcher', 'bwrap'], UNKNOWN],
  },
  {
    name: 'checkCommandWrites',
    make: (o) => checkCommandWrites('ls', o as never),
    valid: { workingDirectory: dir, homeDirectory: dir },
    bad: [['workingDirectory', undefined], ['homeDirectory', 1], ['writableRoots', dir], ['writableRoots[0]', ''], UNKNOWN],
  },
  {
    name: 'Jury',
    make: (o) => new Jury(o as never),
    valid: { judges: [fileExistsJudge('a'), fileExistsJudge('b')], strategy: 'average' },
    bad: [
      ['judges', 'all'],
      ['judges[1]', { name: 'x' }],
      ['strategy', 'best'],
      ['threshold', 2],
      ['threshold', Number.NaN],
      ['weights.a', -1],
      ['name', ''],
      UNKNOWN,
    ],
  },
  {
    name: 'commandJudge',
    make: (o) => commandJudge('true', o as never),
    valid: {},
    bad: [['cwd', ''], ...TIME('timeoutMs'), ...COUNT('maxOutputBytes'), ['passEnv', 'some'], ['env.PATH', 1], ['name', 3], UNKNOWN],
  },
  { name: 'fileExistsJudge', make: (o) => fileExistsJudge('a', o as never), valid: {}, bad: [['name', ''], ['name', 1], UNKNOWN] },
  { name: 'fileContainsJudge', make: (o) => fileContainsJudge('a', 'b', o as never), valid: {}, bad: [['name', '  '], UNKNOWN] },
  {
    name: 'llmJudge',
    make: (o) => llmJudge(o as never),
    valid: { model, criteria: 'the tests pass' },
    // A model that is none is UnsupportedModelError, as everywhere a model goes (supported-model.test.ts).
    bad: [['generate', 'fn'], ['criteria', ''], ['criteria', 5], ['name', ''], ['maxOutputChars', 1], ['maxOutputChars', 2.5], UNKNOWN],
  },
  {
    name: 'ToolCallAdvisor',
    make: (o) => new ToolCallAdvisor(o as never),
    valid: {},
    bad: [
      ...COUNT('maxToolCalls'),
      ['maxCallsPerTool', 0],
      ['maxCallsPerTool.search', -1],
      ['onLimitExceeded', 'ignore'],
      ['approve', true],
      ['parallel', 'yes'],
      ['listeners', 'x'],
      ...TIME('toolTimeoutMs'),
      ['toolTimeouts.shell', 0],
      ['toolTimeouts.shell', Infinity],
      ...ORDER,
      UNKNOWN,
    ],
  },
  {
    name: 'SimpleLoggerAdvisor',
    make: (o) => new SimpleLoggerAdvisor(o as never),
    valid: {},
    bad: [['log', 'x'], ['includeContent', 'no'], ...ORDER, UNKNOWN],
  },
  {
    name: 'SafeGuardAdvisor',
    make: (o) => new SafeGuardAdvisor(o as never),
    valid: { sensitiveWords: ['secret'] },
    bad: [['sensitiveWords', 'secret'], ['sensitiveWords[1]', 5], ['failureResponse', 3], ...ORDER, UNKNOWN],
  },
  {
    name: 'StructuredOutputValidationAdvisor',
    make: (o) => new StructuredOutputValidationAdvisor(o as never),
    valid: {},
    bad: [['maxRepeatAttempts', -1], ['maxRepeatAttempts', 1.5], ['maxRepeatAttempts', Infinity], ['schema', 'json'], ...ORDER, UNKNOWN],
  },
  {
    name: 'TokenBudgetAdvisor',
    make: (o) => new TokenBudgetAdvisor(o as never),
    valid: { maxTokens: 1000 },
    bad: [...COUNT('maxTokens'), ['tokenizer', {}], ...ORDER, UNKNOWN],
  },
  {
    name: 'MessageChatMemoryAdvisor',
    make: (o) => new MessageChatMemoryAdvisor(o as never),
    valid: { memory },
    bad: [['memory', {}], ['conversationId', ''], ['conversationId', 5], ...ORDER, UNKNOWN],
  },
  {
    name: 'PromptChatMemoryAdvisor',
    make: (o) => new PromptChatMemoryAdvisor(o as never),
    valid: { memory },
    bad: [['memory', 'memory'], ['systemPrompt', 'text'], ['conversationId', ''], ...ORDER, UNKNOWN],
  },
  {
    name: 'QuestionAnswerAdvisor',
    make: (o) => new QuestionAnswerAdvisor(o as never),
    valid: { vectorStore },
    bad: [
      ['vectorStore', {}],
      ['searchRequest.topK', 0],
      ['searchRequest.topK', Number.NaN],
      ['searchRequest.similarityThreshold', 1.5],
      ['searchRequest.similarityThreshold', -0.1],
      ['searchRequest.tpoK', 3],
      ['promptTemplate', 5],
      ...ORDER,
      UNKNOWN,
    ],
  },
  {
    name: 'BreakerRecoveryAdvisor',
    make: (o) => new BreakerRecoveryAdvisor(o as never),
    valid: { breaker: new AgentBreaker() },
    bad: [['breaker', {}], ['memory', 1], ['summarize', 'short'], ...ORDER, UNKNOWN],
  },
  {
    name: 'AgentBreaker',
    make: (o) => new AgentBreaker(o as never),
    valid: {},
    bad: [
      ['toolSpiral.similarity', Number.NaN],
      ['toolSpiral.similarity', 2],
      ['toolSpiral.maxRepeats', Infinity],
      ['toolSpiral.window', '5'],
      ['errorLoop.maxRepeats', -1],
      ['tokenDrift.growthFactor', 0.5],
      ['budget.maxTokens', -5],
      ['budget.maxTokens', Number.NaN],
      ['cooldownMs', -1],
      ['cooldownMs', Infinity],
      ['onStoreError', 'ignore'],
      ['store', {}],
      ['now', 5],
      UNKNOWN,
    ],
  },
  {
    name: 'MessageWindowChatMemory',
    make: (o) => new MessageWindowChatMemory(o as never),
    valid: {},
    bad: [...COUNT('maxMessages'), ['maxMessageBytes', 0], ['repository', {}], UNKNOWN],
  },
  {
    name: 'TokenWindowChatMemory',
    make: (o) => new TokenWindowChatMemory(o as never),
    valid: { maxTokens: 500 },
    bad: [...COUNT('maxTokens'), ['tokenizer', 'chars'], ['maxMessageBytes', -1], UNKNOWN],
  },
  {
    name: 'CharsPerTokenEstimator',
    make: (o) => new CharsPerTokenEstimator(o as never),
    valid: {},
    bad: [['charsPerToken', 0], ['charsPerToken', Number.NaN], ['charsPerToken', Infinity], UNKNOWN],
  },
  {
    name: 'SqliteChatMemoryRepository',
    make: (o) => new SqliteChatMemoryRepository(o as never),
    valid: { path: ':memory:' },
    bad: [['path', ''], ['path', 1], ['busyTimeoutMs', -1], ['busyTimeoutMs', Infinity], ['busyTimeoutMs', 2 ** 31], UNKNOWN],
  },
  {
    name: 'PostgresChatMemoryRepository',
    make: (o) => new PostgresChatMemoryRepository(o as never),
    valid: { connectionString: 'postgres://user@127.0.0.1:1/db' },
    checkValid: false,
    bad: [['connectionString', ''], ['tableName', ''], ['tableName', 5], ...TIME('connectTimeoutMs'), ['pool', {}], UNKNOWN],
  },
  {
    name: 'PgVectorStore',
    make: (o) => new PgVectorStore(o as never),
    valid: { connectionString: 'postgres://user@127.0.0.1:1/db', dimensions: 8 },
    checkValid: false,
    bad: [...COUNT('dimensions'), ['distance', 'l2'], ['createIndex', 'ivf'], ['initializeSchema', 'yes'], ['embedder', {}], UNKNOWN],
  },
  {
    name: 'RedisChatMemoryRepository',
    make: (o) => new RedisChatMemoryRepository(o as never),
    valid: { url: 'redis://127.0.0.1:1' },
    checkValid: false,
    bad: [['url', ''], ['keyPrefix', 5], ...TIME('connectTimeoutMs'), UNKNOWN],
  },
  {
    name: 'RedisBreakerStore',
    make: (o) => new RedisBreakerStore(o as never),
    valid: { client: redisClient },
    bad: [...COUNT('ttlMs'), ...TIME('timeoutMs'), ['keyPrefix', 1], ['isOpen', true], UNKNOWN],
  },
  {
    name: 'InMemoryBreakerStore',
    make: (o) => new InMemoryBreakerStore(o as never),
    valid: {},
    bad: [
      ...COUNT('maxSessions'),
      ['idleTtlMs', 0],
      ['idleTtlMs', Number.NaN],
      ['decodedSessions', -1],
      ['decodedSessions', 1.5],
      ['decodedSessions', '8'],
      ...TIME('decodedIdleMs'),
      ['now', 1],
      UNKNOWN,
    ],
  },
  {
    name: 'createModelProxy',
    make: (o) => createModelProxy(o as never),
    valid: { upstream: 'http://127.0.0.1:1/v1', breaker },
    bad: [['upstream', ''], ['upstream', 5], ['upstream', 'ftp://x'], ['breaker', {}], ['metrics', '/metrics'], ['fetch', true], UNKNOWN, ['port', 0]],
  },
  {
    name: 'startModelProxy',
    make: (o) => startModelProxy(o as never),
    valid: { upstream: 'http://127.0.0.1:1/v1', breaker },
    checkValid: false,
    bad: [['port', -1], ['port', 70_000], ['port', 1.5], ['port', '8787'], ['host', ''], ['upstream', 'not a url'], ['breaker', null], UNKNOWN],
  },
  {
    name: 'startMcpProxy',
    make: (o) => startMcpProxy(o as never),
    valid: { upstream: { command: 'mcp-server' }, breaker },
    checkValid: false,
    bad: [
      ['upstream', 'npx server'],
      ['upstream.command', ''],
      ['upstream.args', 'a b'],
      ['upstream.args[0]', 1],
      ['upstream.env.PATH', 5],
      ['upstream.cwd', ''],
      ['upstream.comand', 'x'],
      ['breaker', {}],
      ['sessionId', ''],
      ['onError', 'x'],
      ['downstream', { input: 1 }],
      UNKNOWN,
    ],
  },
  {
    name: 'governorMiddleware',
    make: (o) => governorMiddleware(breaker, o as never),
    valid: { sessionId: 's-1' },
    bad: [['sessionId', ''], ['sessionId', 5], UNKNOWN],
  },
  {
    name: 'breakerForOpenAIAgents',
    make: (o) => breakerForOpenAIAgents(breaker, o as never),
    valid: {},
    bad: [['sessionId', ''], ['runConfig', 'default'], ['runConfig.modelProvider', {}], ['runConfig.modelProvider', 'openai'], UNKNOWN],
  },
  {
    name: 'breakerForAiSdk',
    make: (o) => breakerForAiSdk(breaker, o as never),
    valid: { sessionId: 'c-42' },
    bad: [['sessionId', ''], ['sessionId', undefined], ['sessionId', 42], UNKNOWN],
  },
  {
    name: 'aiSdkEmbedder',
    make: (o) => aiSdkEmbedder('text-embedding-3-small' as never, o as never),
    valid: { maxParallelCalls: Infinity },
    bad: [
      ...COUNT('dimensions'),
      ['requestDimensions', -1],
      ['maxRetries', -1],
      ['maxRetries', 0.5],
      ['maxParallelCalls', 0],
      ['providerOptions.openai', 'x'],
      UNKNOWN,
    ],
  },
  {
    name: 'LexicalHashEmbedding',
    make: (o) => new LexicalHashEmbedding(o as never),
    valid: {},
    bad: [...COUNT('dimensions'), ['dimensions', 16_001], UNKNOWN],
  },
  {
    name: 'healthHandler',
    make: (o) => healthHandler(o as never),
    valid: { breakers: { main: breaker } },
    bad: [['breakers.main', {}], ['checks.db', 'SELECT 1'], ...TIME('timeoutMs'), ['maxListedSessions', -1], ['maxListedSessions', 1.5], UNKNOWN],
  },
  {
    name: 'health',
    make: (o) => health(o as never),
    valid: { checks: { ok: () => true } },
    bad: [['checks', []], ['timeoutMs', Infinity], UNKNOWN],
  },
  {
    name: 'renderHtmlReport',
    make: (o) => renderHtmlReport(new ReplaySummaryBuilder().build(), o as never),
    valid: { source: 'runs.jsonl' },
    bad: [['source', undefined], ['source', 5], ['generatedAt', '2026-01-01'], ['generatedAt', new Date(Number.NaN)], UNKNOWN],
  },
  { name: 'InMemoryVectorStore', make: (o) => new InMemoryVectorStore(o as never), valid: {}, bad: [['embedder', {}], ['embedder', 'lexical'], UNKNOWN] },
];

/** Sets `value` at a dotted path of a copy of `base`. */
function withValue(base: Options, dotted: string, value: unknown): Options {
  const bracket = dotted.match(/^(\w+)\[(\d+)\]$/);
  if (bracket) {
    const [, key, index] = bracket;
    const list = [...((base[key!] as unknown[]) ?? ['ok'])];
    list[Number(index)] = value;
    return { ...base, [key!]: list };
  }
  const [head, ...rest] = dotted.split('.');
  if (rest.length === 0) return { ...base, [head!]: value };
  return { ...base, [head!]: withValue((base[head!] as Options) ?? {}, rest.join('.'), value) };
}

describe('every public option is validated at construction', () => {
  for (const row of TABLE) {
    test(row.name, async () => {
      if (row.checkValid !== false) {
        const built = row.make({ ...row.valid });
        (built as { close?: () => void }).close?.();
      }
      for (const [option, value] of row.bad) {
        // The async factories (startModelProxy, startMcpProxy) refuse with a rejection, before starting anything.
        await assert.rejects(
          async () => row.make(withValue(row.valid, option, value)),
          (error: unknown) => {
            assert.ok(InvalidOptionError.isInstance(error), `${row.name} ${option}=${describeValue(value)}: expected InvalidOptionError, got ${String(error)}`);
            assert.equal(error.option, option, `${row.name} ${option}=${describeValue(value)}: the error names the option`);
            assert.equal(error.code, 'GOVERNOR_INVALID_OPTION');
            return true;
          },
          `${row.name} accepted ${option}=${describeValue(value)}`,
        );
      }
    });
  }
  test('the table covers at least 150 wrong values', () => {
    // Counted from the table itself, so the figure does not depend on which row tests ran, or how far.
    const cases = TABLE.reduce((sum, row) => sum + row.bad.length, 0);
    assert.ok(cases >= 150, `only ${cases} cases`);
  });
});

describe('ChatClient builder and request settings', () => {
  const settings: ReadonlyArray<readonly [string, unknown]> = [
    ['maxOutputTokens', 0],
    ['maxOutputTokens', 1.5],
    ['temperature', -1],
    ['temperature', Number.NaN],
    ['topP', 1.5],
    ['topK', 0],
    ['seed', 0.5],
    ['stopSequences', 'END'],
    ['headers.x-a', 5],
    ['maxRetries', -1],
    ['maxRetries', Infinity],
    ['maxRetries', 1000],
    ['retryDelayMs', -5],
    ['stallTimeoutMs', 0],
    ['stallTimeoutMs', MAX_TIMER_MS + 1],
    ['toolChoice', 'sometimes'],
    ['toolChoice', { type: 'tool' }],
    ['maxTokens', 100],
  ];
  test('defaultOptions() and options() refuse each bad setting, naming it', () => {
    for (const [option, value] of settings) {
      for (const apply of [(o: Options) => ChatClient.builder(model).defaultOptions(o as never), (o: Options) => client.prompt('x').options(o as never)]) {
        assert.throws(
          () => apply(withValue({}, option, value)),
          (e: unknown) => InvalidOptionError.isInstance(e) && e.option === option,
          `${option}=${describeValue(value)}`,
        );
      }
    }
  });

  test('the builder refuses a non-advisor, a non-string system and non-object tools', () => {
    assert.throws(
      () => ChatClient.builder(model).defaultAdvisors({ name: 'x' } as never),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'defaultAdvisors[0]',
    );
    assert.throws(
      () => ChatClient.builder(model).defaultSystem(5 as never),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'defaultSystem',
    );
    assert.throws(
      () => ChatClient.builder(model).defaultTools({ t: 'tool' } as never),
      (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'defaultTools.t',
    );
  });
});

test('an unknown option names the known ones', () => {
  assert.throws(
    () => new AgentLoop({ client, timeout: 5 } as never),
    (e: unknown) => InvalidOptionError.isInstance(e) && /is not an option of AgentLoop; its options are: client, maxInvocations, timeoutMs/.test(e.message),
  );
});

test('a secret passed where an option or a model was expected never comes back in the error', async () => {
  const key = 'sk-proj-abcdefghijklmnopqrstuvwx1234';
  const breaker = new AgentBreaker({ telemetry: false });
  const attempts: Array<() => unknown> = [
    () => breakerForOpenAIAgents(breaker, { runConfig: key as never }),
    () => breakerForOpenAIAgents(breaker, { runConfig: { modelProvider: key as never } }),
    () => governorMiddleware(breaker, key as never),
    () => breakerForAiSdk(breaker, key as never),
    () => breakerForAiSdk(breaker, { sessionId: 's' }).model(key as never),
    () => breakerForAiSdk(breaker, { sessionId: 's' }).tools({ search: key } as never),
    () => breakerForOpenAIAgents(breaker).tools([key] as never),
    () => client.prompt('x').options({ toolChoice: `${key}-and-more-than-forty-characters-after-it` } as never),
  ];
  for (const attempt of attempts) {
    assert.throws(attempt, (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.doesNotMatch(error.message, /abcdefghijklmnop/, error.message);
      return true;
    });
  }
});

test("the doors' tools() and model() refuse what is not a tool set or a model, naming what to pass", () => {
  const breaker = new AgentBreaker({ telemetry: false });
  const aiSdk = breakerForAiSdk(breaker, { sessionId: 's' });
  const agents = breakerForOpenAIAgents(breaker);
  const checkBuild = agentsTool({ name: 'check_build', description: 'Status of a CI build', parameters: z.object({}), execute: async () => 'running' });
  const cases: Array<[() => unknown, string, RegExp]> = [
    [() => aiSdk.tools(undefined as never), 'tools', /ToolSet.*got undefined/],
    [() => aiSdk.tools([{ execute: async () => 'x' }] as never), 'tools', /object of tools by name.*got an array/],
    [() => aiSdk.tools(new Map([['search', { execute: async () => 'x' }]]) as never), 'tools', /object of tools by name.*got an object/],
    [() => agents.tools(undefined as never), 'tools', /array of the SDK's tools.*got undefined/],
    [() => agents.tools({ search: {} } as never), 'tools', /array of the SDK's tools.*got an object/],
    [() => aiSdk.tools({ search: undefined } as never), 'tools.search', /AI SDK tool.*tool\(\{.*got undefined/],
    [() => aiSdk.tools({ search: null } as never), 'tools.search', /AI SDK tool.*got null/],
    [() => agents.tools([undefined] as never), 'tools[0]', /Agents SDK tool.*tool\(\{.*got undefined/],
    [() => agents.tools([checkBuild, null] as never), 'tools[1]', /Agents SDK tool.*got null/],
    [() => agents.tools([{ name: 'search' }] as never), 'tools[0]', /Agents SDK tool.*got an object/],
    [() => agents.model(undefined as never), 'model', /Agents SDK Model/],
    [() => agents.model({ getResponse: 'x' } as never), 'model', /getResponse and getStreamedResponse/],
  ];
  for (const [attempt, option, message] of cases) {
    assert.throws(attempt, (e: unknown) => InvalidOptionError.isInstance(e) && e.option === option && message.test(e.message));
  }
  // A model that is none at all is the AI SDK door's typed model error.
  assert.throws(
    () => aiSdk.model(undefined as never),
    (e: unknown) => e instanceof Error && e.name === 'UnsupportedModelError',
  );
});

test('each door refuses a breaker it could not run with, before any run', () => {
  // Each of the three methods is called on a run: one missing used to surface as a TypeError mid-run.
  const partial = [
    { observe: async () => ({ action: 'allow' }) },
    { checkModelCall: async () => ({ action: 'allow' }), observe: async () => ({ action: 'allow' }) },
  ];
  for (const breaker of partial) {
    for (const [door, make] of [
      ['breakerForAiSdk', () => breakerForAiSdk(breaker as never, { sessionId: 's' })],
      ['breakerForOpenAIAgents', () => breakerForOpenAIAgents(breaker as never)],
      ['governorMiddleware', () => governorMiddleware(breaker as never)],
    ] as const) {
      assert.throws(
        make,
        (e: unknown) => InvalidOptionError.isInstance(e) && e.option === 'breaker' && /checkModelCall, checkToolCall and observe/.test(e.message),
        `${door} accepted a breaker with only ${Object.keys(breaker).join(', ')}`,
      );
    }
  }
});
