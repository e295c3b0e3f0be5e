import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatAdversarialText, measureAdversarialText } from './adversarial-text.ts';

test('the adversarial-text benchmark times each pattern in each place against ordinary words', async () => {
  const report = await measureAdversarialText({ chars: 2_048, repeats: 1, units: ['key=', '1-'] });
  assert.equal(report.chars, 2_048);
  // 2 patterns × 9 places (8 in the breaker, and redact()).
  assert.equal(report.rows.length, 18);
  for (const row of report.rows) assert.ok(row.ms >= 0 && row.ordinaryMs >= 0, `${row.unit} in ${row.place}`);
  const table = formatAdversarialText(report);
  assert.match(table, /one word of 2,048 characters/);
  // One line per place, naming its costliest pattern.
  assert.match(table, /\nredact\(\)\s+\d+\.\d\d\s+"(?:key=|1-)"\s+\d+\.\d\d\s+\d+\.\d/);
  assert.equal(table.split('\n').length, 3 + 9);
});
