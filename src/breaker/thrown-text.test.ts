import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isTransientError } from './similarity/result-hash.ts';
import { thrownText } from './thrown-text.ts';

describe('thrownText', () => {
  test('an outage said only in fields leads the text, so it reads as one', () => {
    const status = Object.assign(new Error('upstream failed'), { status: 503 });
    const statusCode = Object.assign(new Error('Request failed'), { statusCode: 429 });
    const fetchFailed = new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    assert.equal(thrownText(status), 'HTTP 503: upstream failed');
    assert.equal(thrownText(statusCode), 'HTTP 429: Request failed');
    assert.equal(thrownText(fetchFailed), 'ECONNREFUSED: fetch failed');
    for (const error of [status, statusCode, fetchFailed]) {
      assert.equal(isTransientError(error.message), false, `the message alone does not say it: ${error.message}`);
      assert.equal(isTransientError(thrownText(error)), true);
    }
  });

  test('a message that names it already, a rejection and a thrown non-error are left as they are', () => {
    assert.equal(thrownText(Object.assign(new Error('503 Service Unavailable'), { status: 503 })), '503 Service Unavailable');
    assert.equal(thrownText(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), 'read ECONNRESET');
    const notFound = Object.assign(new Error('invoice not found'), { status: 404 });
    assert.equal(thrownText(notFound), 'HTTP 404: invoice not found');
    assert.equal(isTransientError(thrownText(notFound)), false);
    assert.equal(thrownText(new Error('invoice not found')), 'invoice not found');
    assert.equal(thrownText('plain string'), 'plain string');
    assert.equal(thrownText(Object.assign(new Error('ok'), { status: 200, code: 'not-a-system-code' })), 'ok');
  });

  test('a cycle of causes ends', () => {
    const a = new Error('a');
    const b = Object.assign(new Error('b', { cause: a }), { code: 'ETIMEDOUT' });
    Object.assign(a, { cause: b });
    assert.equal(thrownText(a), 'ETIMEDOUT: a');
  });
});
