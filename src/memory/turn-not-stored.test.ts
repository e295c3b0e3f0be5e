/**
 * What a ChatMemoryTurnNotStoredError says about the turn when the store
 * stopped answering while the model answered: over real HTTP, against a Redis
 * process that is stopped and resumed, and a PostgreSQL whose connection pauses
 * as a stopped server's does.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import type { ModelMessage } from 'ai';
import pg from 'pg';
import {
  ChatClient,
  ChatMemoryStoreError,
  ChatMemoryTurnNotStoredError,
  CONVERSATION_ID,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
} from '../index.ts';
import type { ChatMemoryRepository } from './chat-memory-repository.ts';
import { PostgresChatMemoryRepository } from '../postgres/index.ts';
import { RedisChatMemoryRepository } from '../redis/index.ts';
import { killProcess, requirePostgres, startDedicatedRedis, testDatabaseUrl, unusedPort } from '../test-support/services.ts';
import { type StallingServer, stallingServer } from '../test-support/stalling-server.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

/** The store stops answering while the model answers the second call, and answers again `resumeAfterMs` later. */
interface Stall {
  stop(): void;
  resume(): void;
}

/**
 * Runs two calls in conversation `c`, the store stalling during the model's
 * answer to the second, and returns the error of the second call and the
 * conversation once the store has answered again for a while.
 */
async function secondTurnOverAStall(repository: ChatMemoryRepository, stall: Stall, resumeAfterMs: number): Promise<{ error: unknown; stored: string[] }> {
  let calls = 0;
  let resumed: Promise<void> | undefined;
  await using server = await new ScriptedModelServer({
    script: async () => {
      calls++;
      if (calls === 2) {
        stall.stop();
        resumed = new Promise((resolve) =>
          setTimeout(() => {
            stall.resume();
            resolve();
          }, resumeAfterMs),
        );
      }
      return { text: calls === 1 ? 'Hello Ada.' : 'Noted, you live in Paris.' };
    },
  }).start();
  const client = ChatClient.builder(scriptedModel(server))
    .defaultAdvisors(new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory({ repository }) }))
    .defaultAdvisorParams({ [CONVERSATION_ID]: 'c' })
    .build();
  await client.prompt('My name is Ada').call().content();
  const error = await client
    .prompt('I live in Paris')
    .call()
    .content()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  await resumed;
  // What the store received before it stopped, it applies once it resumes.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const stored = (await repository.findByConversationId('c')).map(textOf);
  return { error, stored };
}

function textOf(message: ModelMessage): string {
  const { content } = message;
  const text = typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : '')).join('');
  return `${message.role}: ${text}`;
}

function turnNotStored(error: unknown): ChatMemoryTurnNotStoredError {
  assert.ok(ChatMemoryTurnNotStoredError.isInstance(error), String(error));
  assert.equal(error.response.text, 'Noted, you live in Paris.');
  return error;
}

describe('a turn whose store stopped answering while the model answered', () => {
  test('Redis: the write may have reached the server, which applies it when it resumes: the error says the turn may be stored', async () => {
    const port = await unusedPort();
    const redis = await startDedicatedRedis(port);
    cleanups.push(() => killProcess(redis));
    const repository = new RedisChatMemoryRepository({ url: `redis://127.0.0.1:${port}`, timeoutMs: 500 });
    cleanups.push(() => repository.close());
    const pid = redis.pid ?? 0;
    const { error, stored } = await secondTurnOverAStall(
      repository,
      { stop: () => process.kill(pid, 'SIGSTOP'), resume: () => process.kill(pid, 'SIGCONT') },
      1000,
    );

    const failure = turnNotStored(error);
    assert.match(failure.message, /no reply within 500 ms/);
    assert.equal(failure.mayBeApplied, true);
    assert.match(failure.message, /the turn may still have been stored/i);
    assert.match(failure.message, /read the conversation before storing it again/i);
    assert.ok(ChatMemoryStoreError.isInstance(failure.cause) && failure.cause.mayBeApplied, 'the repository said so');
    // Which it was: storing e.response again would have stored the turn twice.
    assert.deepEqual(stored, ['user: My name is Ada', 'assistant: Hello Ada.', 'user: I live in Paris', 'assistant: Noted, you live in Paris.']);
  });

  test('PostgreSQL: a transaction whose first statement got no reply is rolled back with its connection: the error does not say the turn may be stored', async () => {
    const { repository, relay } = await postgresThroughRelay();
    const { error, stored } = await secondTurnOverAStall(repository, { stop: () => relay.stall(), resume: () => relay.resume() }, 1000);

    const failure = turnNotStored(error);
    assert.match(failure.message, /no reply within 500 ms/);
    assert.equal(failure.mayBeApplied, false);
    assert.doesNotMatch(failure.message, /may still have been/);
    assert.deepEqual(stored, ['user: My name is Ada', 'assistant: Hello Ada.'], 'the turn was not stored, as the error said');
  });

  test('PostgreSQL: a COMMIT sent that got no reply may have been applied: the error says the turn may be stored, as it was', async () => {
    const { repository, relay } = await postgresThroughRelay();
    // The stall begins as the turn's COMMIT is sent: the server has it all, and commits it once it reads it.
    const { error, stored } = await secondTurnOverAStall(repository, { stop: () => relay.stallAtNext('COMMIT'), resume: () => relay.resume() }, 1000);

    const failure = turnNotStored(error);
    assert.match(failure.message, /no reply within 500 ms/);
    assert.equal(failure.mayBeApplied, true);
    assert.match(failure.message, /the turn may still have been stored/i);
    assert.deepEqual(stored, ['user: My name is Ada', 'assistant: Hello Ada.', 'user: I live in Paris', 'assistant: Noted, you live in Paris.']);
  });
});

/** A PostgreSQL repository (`timeoutMs` 500, a table of its own) reaching the test server through a stalling relay. */
async function postgresThroughRelay(): Promise<{ repository: PostgresChatMemoryRepository; relay: StallingServer }> {
  const databaseUrl = await requirePostgres(testDatabaseUrl());
  const target = new URL(databaseUrl);
  const relay = await stallingServer({ host: target.hostname, port: Number(target.port) });
  cleanups.push(() => relay.close());
  const tableName = `turn_not_stored_${randomBytes(6).toString('hex')}`;
  cleanups.push(() => dropTables(databaseUrl, tableName));
  const repository = new PostgresChatMemoryRepository({ connectionString: relay.address(databaseUrl), tableName, timeoutMs: 500 });
  cleanups.push(() => repository.close());
  return { repository, relay };
}

async function dropTables(databaseUrl: string, tableName: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS ${tableName}, ${tableName}_schema_migrations`);
  } finally {
    await client.end();
  }
}
