import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { textIdentity } from './text-identity.ts';

describe('text identity', () => {
  test('requests naming different files, chunks or years differ', () => {
    assert.notEqual(textIdentity('Review src/cart.ts for bugs'), textIdentity('Review src/user.ts for bugs'));
    assert.notEqual(textIdentity('Summarise part 2/5 of the report'), textIdentity('Summarise part 3/5 of the report'));
    assert.notEqual(textIdentity('Net income in fiscal 2022'), textIdentity('Net income in fiscal 2023'));
    assert.notEqual(textIdentity('Explain config.yaml'), textIdentity('Explain values.yaml'));
    // A number is its digits with what joins them: a version, a count with a thousands separator, a time of day.
    assert.notEqual(textIdentity('Upgrade to 2.1.0'), textIdentity('Upgrade to 2.1.1'));
    assert.notEqual(textIdentity('Refund 1,200 orders'), textIdentity('Refund 1,300 orders'));
    assert.notEqual(textIdentity('Meeting at 12:30'), textIdentity('Meeting at 12:45'));
    assert.equal(textIdentity('Upgrade to "2.1.0".'), textIdentity('upgrade to 2.1.0'));
    assert.equal(textIdentity('Items 1..2'), textIdentity('items 1 and 2'));
  });

  test('rewordings naming the same things are equal, whatever the wording, case or order', () => {
    assert.equal(textIdentity('Review src/cart.ts again, more carefully.'), textIdentity('Please look at SRC/cart.ts once more'));
    assert.equal(textIdentity('Net income of Initech in 2023'), textIdentity('What was 2023 net income for Initech?'));
    assert.equal(textIdentity('open https://example.org/a and a.md'), textIdentity('a.md, then https://example.org/a'));
  });

  test('text that names nothing exactly has no identity; timestamps and UUIDs are not identity', () => {
    assert.equal(textIdentity('Find the head office of Initech'), 0);
    assert.equal(textIdentity('List its products, e.g. routers, i.e. hardware.'), 0);
    assert.equal(
      textIdentity('status as of 2024-06-01T10:00:00Z, request 1b4e28ba-2fa1-11d2-883f-0016d3cca427'),
      textIdentity('status as of 2024-06-02T11:30:00Z, request 6fa459ea-ee8a-3ca4-894e-db77e160355e'),
    );
    // Addresses and epoch times change on every call: not what a request is about.
    assert.equal(textIdentity('dump memory at 0X7ffd5e8a1b20'), textIdentity('dump memory at 0x7ffd5e8a9c44'));
    assert.equal(textIdentity('events since ts=1715470336 for user 42'), textIdentity('events since ts=1715470999 for user 42'));
    assert.notEqual(textIdentity('events since ts=1715470336 for user 42'), textIdentity('events since ts=1715470336 for user 43'));
  });
});
