import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { breakerFromFlags } from './breaker-flags.ts';
import { CliUsageError } from './command-error.ts';

describe('breakerFromFlags', () => {
  test("a command's defaults apply beneath --config: a config's own value wins, a bad one is named", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'governor-flags-'));
    try {
      const defaults = { idleResetMs: 900_000 };
      const plain = await breakerFromFlags({ defaults }, dir);
      assert.equal(plain.breaker.options.idleResetMs, 900_000);
      await writeFile(join(dir, 'never.json'), JSON.stringify({ idleResetMs: 0, cooldownMs: 5_000 }));
      const configured = await breakerFromFlags({ config: 'never.json', defaults }, dir);
      assert.equal(configured.breaker.options.idleResetMs, 0);
      assert.equal(configured.breaker.options.cooldownMs, 5_000);
      await writeFile(join(dir, 'bad.json'), JSON.stringify({ idleResetMs: -5 }));
      await assert.rejects(
        breakerFromFlags({ config: 'bad.json', defaults }, dir),
        (error: unknown) => error instanceof CliUsageError && /--config bad\.json: .*idleResetMs/.test(error.message),
      );
      // Without defaults, the breaker's own.
      assert.equal((await breakerFromFlags({}, dir)).breaker.options.idleResetMs, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
