import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatUsd } from './format-usd.ts';

test('a non-zero amount is never shown as zero, nor with an exponent', () => {
  assert.equal(formatUsd(0), '$0.0000');
  assert.equal(formatUsd(1.5), '$1.5000');
  assert.equal(formatUsd(0.01), '$0.0100');
  assert.equal(formatUsd(0.0099999), '$0.0100');
  assert.equal(formatUsd(0.005), '$0.0050');
  assert.equal(formatUsd(0.0000324), '$0.000032');
  assert.equal(formatUsd(1.2e-9), '$0.0000000012');
});
