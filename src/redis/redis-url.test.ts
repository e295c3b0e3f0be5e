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

test('a password with an unencoded / ? or # is refused, saying to percent-encode it, without any part of it', () => {
  for (const bad of ['redis://app:7331?Jm2@127.0.0.1:6390', 'redis://:Kq7#Hb5@127.0.0.1:6390', 'redis://:Kq7/Zx9@127.0.0.1:6390/0']) {
    for (const construct of [(url: string) => new RedisBreakerStore({ url }), (url: string) => new RedisChatMemoryRepository({ url })]) {
      assert.throws(
        () => construct(bad),
        (error: unknown) => {
          assert.ok(InvalidOptionError.isInstance(error), `${bad}: ${String(error)}`);
          assert.match(error.message, /percent-encode/);
          for (const piece of ['7331', 'Jm2', 'Kq7', 'Hb5', 'Zx9']) assert.ok(!error.message.includes(piece), `${bad}: ${error.message}`);
          return true;
        },
      );
    }
  }
  // Encoded, the same password is a URL like any other.
  assert.doesNotThrow(() => new RedisBreakerStore({ url: `redis://:${encodeURIComponent('Kq7/Zx9?#@')}@127.0.0.1:6390/0` }).close());
});
