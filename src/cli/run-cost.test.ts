import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ScriptedModelServer } from '../testing/index.ts';
import { runGovernor as governor } from './test-support/run-governor.ts';

const dir = mkdtempSync(join(tmpdir(), 'governor-run-cost-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a cost below a cent is shown as what it is, not as $0.0000', async () => {
  // gpt-4o-mini: 200 tokens in and 4 out cost $0.0000324; the next call would pass the $0.0001 limit.
  await using server = await new ScriptedModelServer({
    script: [
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo hi' } }], usage: { promptTokens: 200, completionTokens: 4 } },
      { toolCalls: [{ name: 'submit', arguments: { summary: 'done' } }], usage: { promptTokens: 200, completionTokens: 4 } },
    ],
  }).start();
  const args = ['run', 'Say hi', '--dir', dir, '--base-url', server.baseURL, '--model', 'gpt-4o-mini', '--sandbox', 'none', '--cost-limit', '0.0001'];
  const { code, stdout, stderr } = await governor(args);
  assert.equal(code, 1, stderr);
  assert.match(stdout, /Result: cost_limit \(the next model call \(about \$0\.0000\d\d with .*cost limit of \$0\.0001 \(\$0\.000032 spent\)\)/);
  assert.match(stdout, /cost: \$0\.000032\b/);
  assert.match(stderr, /so far .*, \$0\.000032\b/);
  assert.doesNotMatch(`${stdout}${stderr}`, /\$0\.0000(?!\d)/);
});
