import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { RedisBreakerStore } from './redis-breaker-store.ts';
import { RedisChatMemoryRepository } from './redis-chat-memory-repository.ts';

test('a url node-redis cannot use is an InvalidOptionError saying what to pass, without the password, for each Redis store', () => {
  const urls = ['nonsense', 'http://127.0.0.1:6411', 'https://user:s3cret@127.0.0.1:6411', 'redis://:s3cret@127.0.0.1:6411/not-a-db', 'unix://user:s3cret@'];
  const stores = {
    RedisBreakerStore: (url: string) => new RedisBreakerStore({ url }),
    RedisChatMemoryRepository: (url: string) => new RedisChatMemoryRepository({ url }),
  };
  for (const [name, construct] of Object.entries(stores)) {
    for (const bad of urls) {
      assert.throws(
        () => construct(bad),
        (error: unknown) => {
          assert.ok(InvalidOptionError.isInstance(error), `${name}, ${bad}: ${String(error)}`);
          assert.equal(error.option, 'url');
          assert.equal(error.code, 'GOVERNOR_INVALID_OPTION');
          assert.match(error.message, /redis:\/\/.*rediss:\/\//);
          assert.doesNotMatch(error.message, /s3cret/);
          return true;
        },
      );
    }
  }
});
