import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactedAddress } from './store-address.ts';

test('an ordinary URL is shown as host:port/path, without user info or query', () => {
  for (const [url, shown] of [
    ['postgres://governor:s3cret@127.0.0.1:1/nowhere', '127.0.0.1:1/nowhere'],
    ['redis://:s3cret@127.0.0.1:1', '127.0.0.1:1'],
    ['redis://user:s3cret@cache.example:6380/2?name=app', 'cache.example:6380/2'],
    ['postgres://app:Kq7%40Zx9%2FW4v%3FJm2%23Hb5@db.example:5432/app?sslmode=require', 'db.example:5432/app'],
    // The last "@" before the host ends the user info, so pg reads this one as meant.
    ['postgres://app:Kq7@Zx9@db.example/app', 'db.example/app'],
    ['postgres:///app?host=/var/run/postgresql', 'localhost/app'],
  ] as const) {
    assert.equal(redactedAddress(url), shown, url);
  }
});

test('a URL whose user info a parser reads as host, path, query or fragment shows no part of it', () => {
  for (const url of [
    'postgres://app:Kq7@Zx9/W4v@127.0.0.1:1/x',
    'redis://:Kq7@Zx9/W4v@127.0.0.1:6390',
    'postgres://Kq7/Zx9:W4v@127.0.0.1:1/x',
    'postgres://app:7331?Jm2@127.0.0.1:1/x',
    'postgres://app:7331?Jm2=Hb5@127.0.0.1:1/x',
    'postgres://app:Kq7@Zx9/W4v?Jm2=Hb5@127.0.0.1:1/x',
    'postgres://app:7331#Hb5@127.0.0.1:1/x',
  ]) {
    const shown = redactedAddress(url);
    for (const piece of ['Kq7', 'Zx9', 'W4v', 'Jm2', 'Hb5', '7331']) {
      assert.ok(!shown.includes(piece), `${url} shown as ${shown}`);
    }
    assert.match(shown, /not shown/);
  }
});

test('a string that is not a URL is named as such', () => {
  assert.equal(redactedAddress('/var/run/postgresql app'), 'an unparseable URL');
});
