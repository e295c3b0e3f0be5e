import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatProxyOverhead, measureProxyOverhead } from './proxy-overhead.ts';

test('the proxy overhead benchmark measures both paths and both modes, with no breaker intervention', async () => {
  const figures = await measureProxyOverhead({ requests: 10, warmUp: 2, words: 20 });
  assert.equal(figures.interventions, 0);
  for (const path of [figures.nonStreamed, figures.streamed]) {
    assert.equal(path.requests, 10);
    for (const p of [path.direct, path.proxied]) assert.ok(p.p50 > 0 && p.p50 <= p.p90);
    assert.equal(path.added.p50, path.proxied.p50 - path.direct.p50);
  }
  // 20 words, one chunk each, plus the role chunk, the finish chunk and [DONE].
  assert.equal(figures.streamed.chunksPerResponse, 23);
  assert.match(formatProxyOverhead(figures), /per streamed chunk: -?\d+\.\d µs added/);
});
