/**
 * Retries sent at once after the request that won a claim failed: the
 * client-side results (or the approval answer) are in the conversation, as
 * that request stored them, and the model has not answered them yet. Of two
 * retries at once, one gets the model's answer and the other fails with the
 * conflict error a first race gives (ToolResultConflictError,
 * ToolApprovalConflictError) before its model is called: on every store, in
 * both modes, with either memory advisor. A retry that wins and fails again
 * lets the next retry go on, and a retry that read the conversation before
 * another one went on and stored a tool's run loses, since the model would
 * answer an old round.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import {
  ChatClient,
  MessageWindowChatMemory,
  ToolApprovalConflictError,
  ToolCallingAdvisor,
  ToolResultConflictError,
  toolApprovalResponse,
  type ChatMemoryRepository,
  type ChatResponse,
} from '../index.ts';
import { SqliteChatMemoryRepository } from '../sqlite/index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import { ReadMeeting, SHARED_STORES, type SharedStore } from '../test-support/shared-chat-stores.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_CALLS,
  CLIENT_SIDE_RESULTS,
  clientSideToolSet,
  inConversation,
  lookupTool,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  refundTool,
} from './test-support/paused-round.ts';

const ADVISORS = Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[];

/** The shared stores, and an SQLite file that each replica opens with a connection of its own. */
const STORES: ReadonlyArray<readonly [string, () => Promise<SharedStore>]> = [
  ...SHARED_STORES,
  [
    'SQLite',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'governor-retries-'));
      const handles: SqliteChatMemoryRepository[] = [];
      return {
        handle() {
          const repository = new SqliteChatMemoryRepository({ path: path.join(dir, 'memory.db') });
          handles.push(repository);
          return repository;
        },
        async [Symbol.asyncDispose]() {
          for (const handle of handles) handle.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

/**
 * `model`, except that its requests numbered in `failing` (from 1) fail, as a provider's 5xx after its retries, and
 * request `held.request` waits for `held.until` first; `requests` counts every request.
 */
function failingAt(model: MockLanguageModelV4, failing: readonly number[], held?: { readonly request: number; readonly until: Promise<void> }) {
  const counted = { requests: 0, model: undefined as unknown as MockLanguageModelV4 };
  const next = async (): Promise<void> => {
    const request = ++counted.requests;
    if (request === held?.request) await held.until;
    if (failing.includes(request)) throw new Error('upstream overloaded');
  };
  counted.model = new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      await next();
      return model.doGenerate(options);
    },
    doStream: async (options: LanguageModelV4CallOptions) => {
      await next();
      return model.doStream(options);
    },
  });
  return counted;
}

/** Of `outcomes`, one answered `text`, and the other failed as `lost` says. */
function assertOneWon(outcomes: readonly PromiseSettledResult<{ text: string }>[], text: string, lost: (error: unknown) => void): void {
  const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.text] : []));
  const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
  assert.deepEqual(won, [text], failed.map(String).join('\n'));
  assert.equal(failed.length, 1);
  lost(failed[0]);
}

/** The retry lost to another: the error a first race for the results gives. */
function lostResults(error: unknown): true {
  assert.ok(ToolResultConflictError.isInstance(error), String(error));
  assert.equal(error.code, 'GOVERNOR_TOOL_RESULT_CONFLICT');
  assert.deepEqual(error.toolCallIds, ['l1', 'loc-1']);
  return true;
}

/** The retry lost to another: the error a first race for the approval gives. */
const lostApproval =
  (approvalId: string) =>
  (error: unknown): true => {
    assert.ok(ToolApprovalConflictError.isInstance(error), String(error));
    assert.equal(error.code, 'GOVERNOR_TOOL_APPROVAL_CONFLICT');
    assert.deepEqual(error.approvalIds, [approvalId]);
    return true;
  };

const approve = (paused: ChatResponse): ModelMessage =>
  toolApprovalResponse(paused.pendingApprovals!.map((p) => ({ approvalId: p.approvalId, approved: true })));

/** A replica of a client with its own memory on `repository`: with a tool loop and server-side tools, or client-side tools only. */
function replica(model: MockLanguageModelV4, advisor: MemoryAdvisorName, repository: ChatMemoryRepository, runs: string[], toolLoop: boolean): ChatClient {
  return ChatClient.builder(model)
    .defaultOptions({ maxRetries: 0 })
    .defaultTools(toolLoop ? { lookup: lookupTool(runs), refund: refundTool(runs) } : clientSideToolSet())
    .defaultAdvisors(...(toolLoop ? [new ToolCallingAdvisor()] : []), MEMORY_ADVISORS[advisor](new MessageWindowChatMemory({ repository })))
    .build();
}

/** Two replicas, each on its own handle of the store, on one model. */
function replicas(model: MockLanguageModelV4, advisor: MemoryAdvisorName, handles: () => ChatMemoryRepository, runs: string[], toolLoop: boolean) {
  return [replica(model, advisor, handles(), runs, toolLoop), replica(model, advisor, handles(), runs, toolLoop)] as const;
}

/** `repository`, except that its appends wait for `gate` and, once `failing` says so, fail (the store gone). */
function appendsControlled(repository: ChatMemoryRepository, control: { gate?: Promise<void>; failing?: (append: number) => boolean }): ChatMemoryRepository {
  let appends = 0;
  return {
    findConversationIds: () => repository.findConversationIds(),
    findByConversationId: (conversationId: string) => repository.findByConversationId(conversationId),
    saveAll: (conversationId: string, messages: readonly ModelMessage[]) => repository.saveAll(conversationId, messages),
    deleteByConversationId: (conversationId: string) => repository.deleteByConversationId(conversationId),
    append: async (conversationId: string, messages: readonly ModelMessage[]) => {
      await control.gate;
      if (control.failing?.(++appends) === true) throw new Error('store gone');
      await repository.append(conversationId, messages);
    },
  };
}

/** Client-side results sent by `clients` at once, after their reads of the conversation met. */
function sendAtOnce(clients: readonly ChatClient[], meeting: ReadMeeting, messages: readonly ModelMessage[], mode: Mode) {
  meeting.arm(clients.length);
  return Promise.allSettled(clients.map((client) => runMode(inConversation(client.prompt().messages(...messages)), mode)));
}

describe('two retries at once after the request that won failed at the model', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of STORES) {
        test(`${mode}, ${advisor}, ${store}: client-side results: one retry gets the answer, the other ToolResultConflictError before its model is called`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const counted = failingAt(mockModel([CLIENT_SIDE_CALLS, { text: 'Done.' }, { text: 'You are welcome.' }]), [2]);
          const [a, b] = replicas(counted.model, advisor, () => meeting.wrap(shared.handle()), [], false);
          await runMode(inConversation(a.prompt('Refund order 7')), mode);
          await assert.rejects(runMode(inConversation(a.prompt().messages(CLIENT_SIDE_RESULTS)), mode), /upstream overloaded/);

          assertOneWon(await sendAtOnce([a, b], meeting, [CLIENT_SIDE_RESULTS], mode), 'Done.', lostResults);
          assert.equal(counted.requests, 3, 'one retry reached the model');
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ['user', 'assistant', 'tool', 'assistant'],
          );
          assertOneResultPerCall(stored);
          assert.equal((await runMode(inConversation(b.prompt('Thanks')), mode)).text, 'You are welcome.');
        });

        test(`${mode}, ${advisor}, ${store}: an approved call that ran: one retry gets the answer, the other ToolApprovalConflictError; the tool ran once`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const runs: string[] = [];
          const counted = failingAt(mockModel([{ toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] }, { text: 'Refunded.' }]), [2]);
          const [a, b] = replicas(counted.model, advisor, () => meeting.wrap(shared.handle()), runs, true);
          const paused = (await runMode(inConversation(a.prompt('Refund 10')), mode)).response;
          const answer = approve(paused);
          await assert.rejects(runMode(inConversation(a.prompt().messages(answer)), mode), /upstream overloaded/);
          assert.deepEqual(runs, ['refund 10']);

          assertOneWon(await sendAtOnce([a, b], meeting, [answer], mode), 'Refunded.', lostApproval(paused.pendingApprovals![0]!.approvalId));
          assert.equal(counted.requests, 3, 'one retry reached the model');
          assert.deepEqual(runs, ['refund 10'], 'the tool ran once');
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ['user', 'assistant', 'tool', 'tool', 'assistant'],
          );
          assertOneResultPerCall(stored);
        });

        test(`${mode}, ${advisor}, ${store}: the retry that won fails at the model too; the next retry goes on`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          let release: () => void = () => {};
          const gate = new Promise<void>((resolve) => {
            release = resolve;
          });
          // The retry that wins waits at the model until the other is over, so that it fails while the other still runs.
          const counted = failingAt(mockModel([CLIENT_SIDE_CALLS, { text: 'Done.' }]), [2, 3], { request: 3, until: gate });
          const [a, b] = replicas(counted.model, advisor, () => meeting.wrap(shared.handle()), [], false);
          await runMode(inConversation(a.prompt('Refund order 7')), mode);
          await assert.rejects(runMode(inConversation(a.prompt().messages(CLIENT_SIDE_RESULTS)), mode), /upstream overloaded/);

          meeting.arm(2);
          const retries = [a, b].map((client) => runMode(inConversation(client.prompt().messages(CLIENT_SIDE_RESULTS)), mode));
          for (const retry of retries) retry.then(release, release);
          const outcomes = await Promise.allSettled(retries);
          const reasons = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as unknown) : o.value.text));
          assert.equal(reasons.filter((r) => r instanceof Error && /upstream overloaded/.test(r.message)).length, 1, String(reasons));
          assert.equal(reasons.filter((r) => ToolResultConflictError.isInstance(r)).length, 1, String(reasons));
          assert.equal(counted.requests, 3);

          assert.equal((await runMode(inConversation(b.prompt().messages(CLIENT_SIDE_RESULTS)), mode)).text, 'Done.');
          assert.equal(counted.requests, 4);
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ['user', 'assistant', 'tool', 'assistant'],
          );
        });
      }
    }
  }
});

describe('a retry that read the conversation before another retry went on from it', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of STORES) {
        test(`${mode}, ${advisor}, ${store}: the other ran a tool and failed at the model; this one is refused before its model is called, a new retry goes on`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const runs: string[] = [];
          const counted = failingAt(
            mockModel([
              { toolCalls: [{ name: 'refund', input: { amount: 10 }, id: 'r1' }] },
              { toolCalls: [{ name: 'lookup', input: { id: 7 }, id: 'l1' }] },
              { text: 'Refunded; order 7 was 10 EUR.' },
            ]),
            [2, 4],
          );
          let release: () => void = () => {};
          const control: { gate?: Promise<void> } = {};
          const a = replica(counted.model, advisor, meeting.wrap(shared.handle()), runs, true);
          const b = replica(counted.model, advisor, appendsControlled(meeting.wrap(shared.handle()), control), runs, true);
          const paused = (await runMode(inConversation(a.prompt('Refund 10')), mode)).response;
          const answer = approve(paused);
          await assert.rejects(runMode(inConversation(a.prompt().messages(answer)), mode), /upstream overloaded/);

          // Both read the conversation; b writes nothing until a's retry, which looks the order up and fails, is over.
          control.gate = new Promise<void>((resolve) => {
            release = resolve;
          });
          meeting.arm(2);
          const first = runMode(inConversation(a.prompt().messages(answer)), mode);
          const stale = runMode(inConversation(b.prompt().messages(answer)), mode);
          try {
            await assert.rejects(first, /upstream overloaded/);
          } finally {
            release();
          }
          await assert.rejects(stale, lostApproval(paused.pendingApprovals![0]!.approvalId));
          assert.equal(counted.requests, 4, "the stale retry's model was not called");
          assert.deepEqual(runs, ['refund 10', 'lookup 7']);

          assert.equal((await runMode(inConversation(b.prompt().messages(answer)), mode)).text, 'Refunded; order 7 was 10 EUR.');
          assert.deepEqual(runs, ['refund 10', 'lookup 7'], 'nothing ran twice');
          assertOneResultPerCall(await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1'));
        });
      }
    }
  }
});

describe('a retry that dies between its claim and its end', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of STORES) {
        test(`${mode}, ${advisor}, ${store}: the store gone for its last write: the results again are refused, a new user message goes on from them`, async () => {
          await using shared = await open();
          const counted = failingAt(mockModel([CLIENT_SIDE_CALLS, { text: 'Thanks to you.' }]), [2, 3]);
          const control: { failing?: (append: number) => boolean } = {};
          const a = replica(counted.model, advisor, appendsControlled(shared.handle(), control), [], false);
          const b = replica(counted.model, advisor, shared.handle(), [], false);
          await runMode(inConversation(a.prompt('Refund order 7')), mode);
          await assert.rejects(runMode(inConversation(a.prompt().messages(CLIENT_SIDE_RESULTS)), mode), /upstream overloaded/);

          // The retry's claim is written; the write that ends it (after the model failed) is not.
          let from = 0;
          control.failing = (append) => {
            from ||= append;
            return append > from;
          };
          await assert.rejects(runMode(inConversation(a.prompt().messages(CLIENT_SIDE_RESULTS)), mode), /upstream overloaded/);
          assert.equal(counted.requests, 3);

          await assert.rejects(runMode(inConversation(b.prompt().messages(CLIENT_SIDE_RESULTS)), mode), lostResults);
          assert.equal(counted.requests, 3, 'the model was not called');
          assert.equal((await runMode(inConversation(b.prompt('Thanks')), mode)).text, 'Thanks to you.');
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ['user', 'assistant', 'tool', 'user', 'assistant'],
            'the results stay in the conversation',
          );
          assertOneResultPerCall(stored);
        });
      }
    }
  }
});
