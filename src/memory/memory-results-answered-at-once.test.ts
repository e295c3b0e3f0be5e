/**
 * The results of client-side tools (tools without `execute`: the caller runs
 * them and sends the results back) sent by two requests at once for the same
 * open round: a double click, a request retried while the first still runs,
 * two replicas on one store. The results are claimed before the model is
 * called: one request gets the model's answer, the other fails with
 * ToolResultConflictError before its model is called, and the conversation
 * holds the results and the answer once. A retry after the winner failed
 * goes on from the stored results.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { ChatClient, MessageWindowChatMemory, ToolResultConflictError, type ChatMemoryRepository, type ChatResponse } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode, type Mode } from '../test-support/run-modes.ts';
import {
  assertOneResultPerCall,
  CLIENT_SIDE_CALLS,
  CLIENT_SIDE_RESULTS,
  clientSideToolSet,
  failingOnce,
  FORMS,
  type Form,
  inConversation,
  MEMORY_ADVISORS,
  type MemoryAdvisorName,
  sentPrompts,
} from './test-support/paused-round.ts';
import { ReadMeeting, SHARED_STORES } from '../test-support/shared-chat-stores.ts';

const ADVISORS = Object.keys(MEMORY_ADVISORS) as MemoryAdvisorName[];

/** Two replicas (each its own memory on its own handle of the store) of a client without a tool loop, on one model. */
function replicas(model: MockLanguageModelV4, advisor: MemoryAdvisorName, handles: () => ChatMemoryRepository) {
  const replica = () =>
    ChatClient.builder(model)
      .defaultOptions({ maxRetries: 0 })
      .defaultTools(clientSideToolSet())
      .defaultAdvisors(MEMORY_ADVISORS[advisor](new MessageWindowChatMemory({ repository: handles() })))
      .build();
  return [replica(), replica()] as const;
}

/** `model`, except that its `round`-th request (from 1) waits for `gate`; `requests` counts what reached it. */
function holding(model: MockLanguageModelV4, round: number, gate: Promise<void>) {
  const counted = { requests: 0, model: undefined as unknown as MockLanguageModelV4 };
  const hold = async (): Promise<void> => {
    if (++counted.requests === round) await gate;
  };
  counted.model = new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      await hold();
      return model.doGenerate(options);
    },
    doStream: async (options: LanguageModelV4CallOptions) => {
      await hold();
      return model.doStream(options);
    },
  });
  return counted;
}

/** The request lost to another with the same results: the error names the calls, and says what happened. */
function assertLost(error: unknown): true {
  assert.ok(ToolResultConflictError.isInstance(error), String(error));
  assert.equal(error.name, 'ToolResultConflictError');
  assert.equal(error.code, 'GOVERNOR_TOOL_RESULT_CONFLICT');
  assert.deepEqual(error.toolCallIds, ['l1', 'loc-1']);
  assert.match(error.message, /already has its result/);
  return true;
}

/** Of `outcomes`, one answered `text`, and the other lost with ToolResultConflictError. */
function assertOneWon(outcomes: readonly PromiseSettledResult<{ text: string }>[], text: string): void {
  const won = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.text] : []));
  const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
  assert.deepEqual(won, [text], String(lost));
  assert.equal(lost.length, 1);
  assertLost(lost[0]);
}

const ROUND_ANSWERED = ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant'];

/** Goes on to the round of client-side calls; returns it and the messages before it. */
async function pausedForResults(client: ChatClient, mode: Mode): Promise<{ paused: ChatResponse; before: ModelMessage[] }> {
  const hello = (await runMode(inConversation(client.prompt('Hi')), mode)).response;
  const paused = (await runMode(inConversation(client.prompt('Refund order 7')), mode)).response;
  return { paused, before: [{ role: 'user', content: 'Hi' }, ...hello.messages, { role: 'user', content: 'Refund order 7' }] };
}

describe('client-side results sent by two requests at once', () => {
  for (const mode of MODES) {
    for (const advisor of ADVISORS) {
      for (const [store, open] of SHARED_STORES) {
        test(`${mode}, ${advisor}, ${store}: both read the open round first; one gets the answer, the other ToolResultConflictError before its model is called`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const model = mockModel([{ text: 'Hello.' }, CLIENT_SIDE_CALLS, { text: 'Done.' }, { text: 'You are welcome.' }]);
          const [a, b] = replicas(model, advisor, () => meeting.wrap(shared.handle()));
          await pausedForResults(a, mode);

          meeting.arm(2);
          const outcomes = await Promise.allSettled([a, b].map((client) => runMode(inConversation(client.prompt().messages(CLIENT_SIDE_RESULTS)), mode)));

          assertOneWon(outcomes, 'Done.');
          assert.equal(sentPrompts(model, mode).length, 3, 'the model answered the results once');
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ROUND_ANSWERED,
            'the results and the answer once',
          );
          assertOneResultPerCall(stored);

          assert.equal((await runMode(inConversation(b.prompt('Thanks')), mode)).text, 'You are welcome.');
          const next = sentPrompts(model, mode).at(-1)!.join('\n');
          assert.equal(next.split('order 7: 10 EUR').length, 2, `the results reach the model once:\n${next}`);
        });

        test(`${mode}, ${advisor}, ${store}: the results sent again (in each form) while the first request waits for the model are refused before the model is called`, async () => {
          await using shared = await open();
          let release: () => void = () => {};
          const gate = new Promise<void>((resolve) => {
            release = resolve;
          });
          const held = holding(mockModel([{ text: 'Hello.' }, CLIENT_SIDE_CALLS, { text: 'Done.' }]), 3, gate);
          const [a, b] = replicas(held.model, advisor, () => shared.handle());
          const { paused, before } = await pausedForResults(a, mode);

          const running = runMode(inConversation(a.prompt().messages(CLIENT_SIDE_RESULTS)), mode);
          try {
            while (held.requests < 3) await new Promise((resolve) => setTimeout(resolve, 1));
            for (const form of Object.keys(FORMS) as Form[]) {
              await assert.rejects(runMode(inConversation(b.prompt().messages(...FORMS[form](paused, CLIENT_SIDE_RESULTS, before))), mode), assertLost, form);
            }
            assert.equal(held.requests, 3, 'no other request reached the model');
          } finally {
            // Also when a check failed: the first request must not outlive the store.
            release();
            await running.catch(() => {});
          }
          assert.equal((await running).text, 'Done.');
          const stored = await new MessageWindowChatMemory({ repository: shared.handle() }).get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ROUND_ANSWERED,
          );
          assertOneResultPerCall(stored);
        });

        test(`${mode}, ${advisor}, ${store}: the request that won fails at the model; the results stay stored, and a retry goes on from them`, async () => {
          await using shared = await open();
          const meeting = new ReadMeeting();
          const model = failingOnce(mockModel([{ text: 'Hello.' }, CLIENT_SIDE_CALLS, { text: 'Done.' }]), 3);
          const [a, b] = replicas(model, advisor, () => meeting.wrap(shared.handle()));
          await pausedForResults(a, mode);

          meeting.arm(2);
          const outcomes = await Promise.allSettled([a, b].map((client) => runMode(inConversation(client.prompt().messages(CLIENT_SIDE_RESULTS)), mode)));
          const reasons = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as unknown) : o.value.text));
          assert.equal(reasons.filter((r) => r instanceof Error && /upstream overloaded/.test(r.message)).length, 1, String(reasons));
          assert.equal(reasons.filter((r) => ToolResultConflictError.isInstance(r)).length, 1, String(reasons));
          const memory = new MessageWindowChatMemory({ repository: shared.handle() });
          assert.deepEqual(
            (await memory.get('c1')).map((m) => m.role),
            ['user', 'assistant', 'user', 'assistant', 'tool'],
            'the results are stored once, although the call failed',
          );

          assert.equal((await runMode(inConversation(b.prompt().messages(CLIENT_SIDE_RESULTS)), mode)).text, 'Done.');
          const stored = await memory.get('c1');
          assert.deepEqual(
            stored.map((m) => m.role),
            ROUND_ANSWERED,
          );
          assertOneResultPerCall(stored);
        });
      }
    }
  }
});
