import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPrometheusExample, type PrometheusExample } from './prometheus.ts';

let example: PrometheusExample;

before(async () => {
  example = await startPrometheusExample({ port: 0 });
});
after(async () => {
  await example?.close();
});

describe('the Prometheus example', () => {
  test('a scrape after an agent call shows the GenAI and Governor metrics, and the health endpoint is up', async () => {
    assert.equal(await example.ask('What is the weather in Paris?'), 'It is 15°C in Paris.');
    const response = await fetch(example.metricsUrl);
    assert.equal(response.status, 200);
    const scrape = await response.text();
    for (const name of [
      'gen_ai_client_token_usage_bucket',
      'gen_ai_client_operation_duration_bucket',
      'governor_tool_calls_total',
      'governor_tool_duration_bucket',
      'governor_cost_total',
      'governor_breaker_open',
    ]) {
      assert.match(scrape, new RegExp(`^${name}\\{`, 'm'), `${name} missing from the scrape`);
    }
    assert.match(scrape, /^governor_tool_calls_total\{[^}]*gen_ai_tool_name="weather"[^}]*governor_tool_outcome="success"[^}]*\} 1$/m);
    assert.match(scrape, /^gen_ai_client_token_usage_count\{[^}]*gen_ai_token_type="input"[^}]*\} 2$/m);

    const healthResponse = await fetch(example.healthUrl);
    assert.equal(healthResponse.status, 200);
    assert.equal(((await healthResponse.json()) as { status: string }).status, 'UP');
  });
});
