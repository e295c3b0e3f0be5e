// The error codes as a user's code reads them: the `@ts-expect-error` lines and the typed table below are checked by
// the typecheck, and the tests run what the package really throws to show the runtime codes are the typed ones.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import { resolveModelSpec } from '../cli/model-spec.ts';
import { CliUsageError } from '../cli/command-error.ts';
import {
  AdvisorHookResultError,
  AdvisorNotInChainError,
  AdvisorOrder,
  AdvisorPlacementError,
  AgentBreakerError,
  AgentLoop,
  BreakerOpenError,
  BreakerUnavailableError,
  BudgetExceededError,
  ChatClient,
  ChatMemoryStoreError,
  type ChatMemoryTurnNotStoredError,
  CommandStartError,
  CycleError,
  DelegationLoopError,
  DuplicateAdvisorError,
  EmbeddingDimensionMismatchError,
  EntityParseError,
  ErrorLoopError,
  GovernorError,
  type GovernorErrorCode,
  InvalidConversationIdError,
  InvalidEmbeddingError,
  InvalidMessageError,
  InvalidMetadataFilterError,
  InvalidOpError,
  InvalidOptionError,
  InvalidStateError,
  InvalidToolApprovalError,
  MessageDecodingError,
  MessageTooLargeError,
  MissingDependencyError,
  ModelStallError,
  NestingTooDeepError,
  RagFixationError,
  SandboxUnavailableError,
  StructuredOutputValidationError,
  TextRepetitionError,
  TokenDriftError,
  ToolApprovalConflictError,
  ToolCallAdvisor,
  ToolCallBlockedError,
  ToolCallLimitExceededError,
  ToolResultConflictError,
  ToolResultWithoutCallError,
  ToolSpiralError,
  ToolTimeoutError,
  TrajectoryFormatError,
  UnansweredToolApprovalError,
  UnsupportedModelError,
  UnsupportedRuntimeError,
  VectorStoreError,
} from '../index.ts';
import { McpMessageTooLargeError, McpRequestError, McpUpstreamError } from '../mcp-proxy/index.ts';
import { UpstreamUnreachableError } from '../proxy/index.ts';
import { BreakerStoreError } from '../redis/index.ts';
import { ScriptedModelServer, ScriptedModelServerError } from '../testing/index.ts';
import { mockModel } from '../test-support/mock-model.ts';

/** True only when A and B are the same type (not merely assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** What `run` throws or rejects with; fails the test when it does neither. */
async function thrownBy(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  assert.fail('nothing was thrown');
}

const advisor = { name: 'Mine', order: AdvisorOrder.DEFAULT };

/**
 * Every code in the union, with a way the package throws it. The `satisfies`
 * makes the typecheck refuse a code missing here or one the union does not
 * hold, and refuse an error whose `code` is not typed as its own literal (the
 * ones made through a public call are checked at run time only).
 */
const THROWN = {
  GOVERNOR_INVALID_OPTION: () => new InvalidOptionError('toolSpiral.window', 'must be a positive integer'),
  GOVERNOR_UNSUPPORTED_RUNTIME: () => new UnsupportedRuntimeError('Node.js 18 is not supported.', 'v18.0.0'),
  GOVERNOR_MISSING_DEPENDENCY: () => new MissingDependencyError('langchain', 'agent-governor/langchain'),
  GOVERNOR_NESTING_TOO_DEEP: () => new NestingTooDeepError('Tool arguments', 64),
  GOVERNOR_UNSUPPORTED_MODEL: () => new UnsupportedModelError(undefined, 'a string'),
  GOVERNOR_INVALID_REQUEST: () => thrownBy(() => ChatClient.builder(mockModel([])).build().prompt().call().content()),
  GOVERNOR_MODEL_STALLED: () => new ModelStallError(1000),
  GOVERNOR_ADVISOR_PLACEMENT: () => new AdvisorPlacementError(advisor, new ToolCallAdvisor()),
  GOVERNOR_ADVISOR_NOT_IN_CHAIN: () => new AdvisorNotInChainError('Mine', []),
  GOVERNOR_DUPLICATE_ADVISOR: () => new DuplicateAdvisorError(advisor),
  GOVERNOR_ADVISOR_HOOK_RESULT: () => new AdvisorHookResultError('Mine', 'before', 42),
  GOVERNOR_ADVISOR_RESULT: () =>
    thrownBy(() =>
      ChatClient.builder(mockModel([{ text: 'hi' }]))
        .defaultAdvisors({ ...advisor, adviseCall: async () => undefined as never })
        .build()
        .prompt('hi')
        .call()
        .content(),
    ),
  GOVERNOR_ENTITY_PARSE: () => new EntityParseError('not json', ['line 1, column 1: not JSON']),
  GOVERNOR_ENTITY_PENDING: () =>
    thrownBy(() =>
      ChatClient.builder(mockModel([{ toolCalls: [{ name: 'ask', input: {} }] }]))
        .defaultTools({ ask: tool({ inputSchema: z.object({}) }) })
        .build()
        .prompt('hi')
        .call()
        .entity(z.object({ a: z.number() })),
    ),
  GOVERNOR_TOOL_CALL_LIMIT: () => new ToolCallLimitExceededError('search', 3),
  GOVERNOR_STREAM_INCOMPLETE: () => thrownBy(streamWithoutFinish),
  GOVERNOR_OUTPUT_VALIDATION: () => new StructuredOutputValidationError(['missing "city"'], 2, '{}'),
  GOVERNOR_INVALID_TOOL_APPROVAL: () => new InvalidToolApprovalError('approval-1'),
  GOVERNOR_UNANSWERED_TOOL_APPROVAL: () => new UnansweredToolApprovalError(['approval-1']),
  GOVERNOR_TOOL_TIMEOUT: () => new ToolTimeoutError('search', 100),
  GOVERNOR_BREAKER_TOOL_SPIRAL: () => new ToolSpiralError('spiral'),
  GOVERNOR_BREAKER_CYCLE: () => new CycleError('cycle'),
  GOVERNOR_BREAKER_ERROR_LOOP: () => new ErrorLoopError('error loop'),
  GOVERNOR_BREAKER_TOKEN_DRIFT: () => new TokenDriftError('drift'),
  GOVERNOR_BREAKER_RAG_FIXATION: () => new RagFixationError('fixation'),
  GOVERNOR_BREAKER_DELEGATION_LOOP: () => new DelegationLoopError('delegation'),
  GOVERNOR_BREAKER_TEXT_REPETITION: () => new TextRepetitionError('repetition'),
  GOVERNOR_BREAKER_BUDGET: () => new BudgetExceededError('budget'),
  GOVERNOR_BREAKER_OPEN: () => new BreakerOpenError('cycle', 'open'),
  GOVERNOR_BREAKER_UNAVAILABLE: () => new BreakerUnavailableError('store down'),
  GOVERNOR_BREAKER_STORE: () => new BreakerStoreError('read', 'connection refused'),
  GOVERNOR_TOOL_CALL_BLOCKED: () => new ToolCallBlockedError('blocked'),
  GOVERNOR_INVALID_STATE: () => new InvalidStateError('not JSON'),
  GOVERNOR_INVALID_OP: () => new InvalidOpError('not JSON'),
  GOVERNOR_INVALID_CONVERSATION_ID: () => new InvalidConversationIdError('it is blank'),
  GOVERNOR_INVALID_MESSAGE: () => new InvalidMessageError(0, 'content', 'must be an array'),
  GOVERNOR_MESSAGE_TOO_LARGE: () => new MessageTooLargeError(0, 2048, 1024),
  GOVERNOR_MESSAGE_DECODING: () => new MessageDecodingError('not JSON'),
  GOVERNOR_CHAT_MEMORY_STORE: () => new ChatMemoryStoreError('Redis', 'read', new Error('down')),
  GOVERNOR_TOOL_APPROVAL_CONFLICT: () => new ToolApprovalConflictError(['approval-1']),
  GOVERNOR_TOOL_RESULT_CONFLICT: () => new ToolResultConflictError(['call-1']),
  GOVERNOR_TOOL_RESULT_WITHOUT_CALL: () => new ToolResultWithoutCallError(['call-1']),
  GOVERNOR_EMBEDDING_DIMENSION_MISMATCH: () => new EmbeddingDimensionMismatchError(3, 2, 'the store'),
  GOVERNOR_INVALID_EMBEDDING: () => new InvalidEmbeddingError('not a number'),
  GOVERNOR_VECTOR_STORE: () => new VectorStoreError('PostgreSQL', 'query', new Error('down')),
  GOVERNOR_COMMAND_START_FAILED: () => new CommandStartError('/missing', new Error('spawn /bin/sh ENOENT')),
  GOVERNOR_SANDBOX_UNAVAILABLE: () => new SandboxUnavailableError('bwrap is not installed'),
  GOVERNOR_LOOP_LIMIT: () => loopLimitSeenByATool(),
  GOVERNOR_TRAJECTORY_FORMAT: () => new TrajectoryFormatError('line 1: not JSON'),
  GOVERNOR_CLI_USAGE: () => new CliUsageError('unknown option --x'),
  GOVERNOR_MODEL_SPEC: () => thrownBy(() => resolveModelSpec({ model: 'openai:gpt-4o', env: {} })),
  GOVERNOR_MCP_UPSTREAM: () => new McpUpstreamError('http://127.0.0.1:1/mcp', new Error('refused')),
  GOVERNOR_MCP_MESSAGE_TOO_LARGE: () => new McpMessageTooLargeError('the MCP client', 2048, 1024),
  GOVERNOR_MCP_REQUEST: () => new McpRequestError('tools/call "search"', 'the server went away', new Error('closed')),
  GOVERNOR_UPSTREAM_UNREACHABLE: () => new UpstreamUnreachableError('http://127.0.0.1:1', new Error('refused')),
  GOVERNOR_SCRIPTED_SERVER_NOT_STARTED: () => thrownBy(() => new ScriptedModelServer({ script: [] }).url),
  GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED: () => listenOnATakenPort(),
} satisfies { readonly [C in GovernorErrorCode]: () => { readonly code: C } | Promise<unknown> };

/** A stream through the tool loop whose inner advisor ends without a finish event. */
async function streamWithoutFinish(): Promise<void> {
  const silent = { name: 'Silent', order: AdvisorOrder.DEFAULT, async *adviseStream() {} };
  const client = ChatClient.builder(mockModel([{ text: 'never' }]))
    .defaultAdvisors(new ToolCallAdvisor(), silent)
    .build();
  for await (const _ of client.prompt('x').stream().content());
}

/** What a tool still running when an AgentLoop's time is up is told through its abort signal. */
async function loopLimitSeenByATool(): Promise<unknown> {
  let reason: unknown;
  const hang = tool({
    inputSchema: z.object({}),
    execute: (_input, { abortSignal }) =>
      new Promise((_, reject) =>
        abortSignal?.addEventListener('abort', () => {
          reason = abortSignal.reason;
          reject(abortSignal.reason);
        }),
      ),
  });
  const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'hang', input: {} }] }]))
    .defaultAdvisors(new ToolCallAdvisor())
    .defaultTools({ hang })
    .build();
  const result = await new AgentLoop({ client, timeoutMs: 50 }).run('x');
  assert.equal(result.status, 'timeout');
  return reason;
}

/** A second scripted server asked for the port the first one holds. */
async function listenOnATakenPort(): Promise<unknown> {
  const first = await new ScriptedModelServer({ script: [] }).start();
  try {
    const second = new ScriptedModelServer({ script: [], port: Number(new URL(first.url).port) });
    return await thrownBy(() => second.start());
  } finally {
    await first.close();
  }
}

describe('error codes', () => {
  test('every code in GovernorErrorCode is what the package throws', async () => {
    for (const [code, make] of Object.entries(THROWN)) {
      const error = await make();
      assert.ok(GovernorError.isInstance(error), `${code}: ${String(error)}`);
      assert.equal(error.code, code);
    }
  });

  test('a misspelt code does not compile, in a comparison or a constructor', () => {
    const error: unknown = new BreakerOpenError('tool_spiral', 'open');
    const seen: string[] = [];
    if (GovernorError.isInstance(error)) {
      // @ts-expect-error misspelt: not a code the package throws
      if (error.code === 'GOVERNOR_BREAKER_OPN') seen.push('misspelt');
      if (error.code === 'GOVERNOR_BREAKER_OPEN') seen.push('open');
    }
    // @ts-expect-error a code of one's own is not a Governor error code
    const own = new GovernorError('MY_APP_FAILED', 'failed');
    assert.deepEqual(seen, ['open']);
    assert.equal(own.code, 'MY_APP_FAILED');
  });

  test("isInstance narrows code to the class's own code", () => {
    const errors: unknown[] = [
      new InvalidOptionError('x', 'y'),
      new InvalidMetadataFilterError('filter', 'unknown operator'),
      new ToolSpiralError('spiral'),
      new BreakerOpenError('cycle', 'open'),
      new ScriptedModelServerError('GOVERNOR_SCRIPTED_SERVER_NOT_STARTED', 'not started'),
    ];
    const codes: GovernorErrorCode[] = [];
    for (const error of errors) {
      if (InvalidMetadataFilterError.isInstance(error)) {
        const same: Equal<typeof error.code, 'GOVERNOR_INVALID_OPTION'> = true;
        if (same) codes.push(error.code);
      } else if (InvalidOptionError.isInstance(error)) {
        const same: Equal<typeof error.code, 'GOVERNOR_INVALID_OPTION'> = true;
        if (same) codes.push(error.code);
      } else if (ToolSpiralError.isInstance(error)) {
        const same: Equal<typeof error.code, 'GOVERNOR_BREAKER_TOOL_SPIRAL'> = true;
        if (same) codes.push(error.code);
      } else if (AgentBreakerError.isInstance(error)) {
        codes.push(breakerStop(error));
      } else if (ScriptedModelServerError.isInstance(error)) {
        const same: Equal<typeof error.code, 'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED' | 'GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED'> = true;
        if (same) codes.push(error.code);
      }
    }
    // A subclass keeps the code of the class it extends.
    const inherited: Equal<ChatMemoryTurnNotStoredError['code'], 'GOVERNOR_CHAT_MEMORY_STORE'> = true;
    assert.ok(inherited);
    assert.deepEqual(codes, [
      'GOVERNOR_INVALID_OPTION',
      'GOVERNOR_INVALID_OPTION',
      'GOVERNOR_BREAKER_TOOL_SPIRAL',
      'GOVERNOR_BREAKER_OPEN',
      'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED',
    ]);
  });

  test('ruling out one breaker stop leaves the others, not nothing', () => {
    // With one code for every stop the classes were the same type, so ruling one out ruled them all out.
    const categories = [new ToolSpiralError('spiral'), new CycleError('cycle')].map((error: AgentBreakerError) => {
      if (ToolSpiralError.isInstance(error)) return 'spiral';
      return error.category;
    });
    assert.deepEqual(categories, ['spiral', 'cycle']);
  });
});

/** A switch over a breaker stop's codes is complete without a default (and one code more would not compile). */
function breakerStop(error: AgentBreakerError): GovernorErrorCode {
  switch (error.code) {
    case 'GOVERNOR_BREAKER_TOOL_SPIRAL':
    case 'GOVERNOR_BREAKER_CYCLE':
    case 'GOVERNOR_BREAKER_ERROR_LOOP':
    case 'GOVERNOR_BREAKER_TOKEN_DRIFT':
    case 'GOVERNOR_BREAKER_RAG_FIXATION':
    case 'GOVERNOR_BREAKER_DELEGATION_LOOP':
    case 'GOVERNOR_BREAKER_TEXT_REPETITION':
    case 'GOVERNOR_BREAKER_BUDGET':
    case 'GOVERNOR_BREAKER_OPEN':
      return error.code;
    // @ts-expect-error the store's code is not a breaker stop's
    case 'GOVERNOR_BREAKER_STORE':
      return 'GOVERNOR_BREAKER_STORE';
  }
}
