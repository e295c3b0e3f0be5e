import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bubblewrapArgs } from './sandbox.ts';

const run = promisify(execFile);

/** Runs `code` in a fresh Node process whose PATH has no bwrap on it, as on a host without bubblewrap. */
async function withoutBubblewrap(code: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'no-bwrap-'));
  try {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { env: { PATH: dir, DIR: dir } });
    return stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const harness = new URL('./index.ts', import.meta.url).href;

describe('sandbox detection', () => {
  test("without bwrap, 'auto' falls back to no sandbox with one warning naming why, and 'bubblewrap' is refused", async () => {
    const out = await withoutBubblewrap(`
      const { shellTool, resolveSandbox } = await import(${JSON.stringify(harness)});
      process.on('warning', (w) => console.log('WARNING', w.code, w.message));
      shellTool({ workingDirectory: process.env.DIR });
      shellTool({ workingDirectory: process.env.DIR, sandbox: 'auto' });
      try { resolveSandbox('bubblewrap'); } catch (e) { console.log('THROWN', e.name, e.code, e.message); }
      await new Promise((r) => setTimeout(r, 50));
    `);
    const warnings = out.split('\n').filter((line) => line.startsWith('WARNING'));
    assert.deepEqual(warnings, ['WARNING GOVERNOR_NO_SANDBOX commands run without a sandbox: bwrap is not installed (not found on PATH)']);
    assert.match(out, /THROWN SandboxUnavailableError GOVERNOR_SANDBOX_UNAVAILABLE .*bwrap is not installed.*sandbox: 'none'/);
  });

  test('the bwrap arguments mount the working directory over the private /tmp and keep the network only when asked', () => {
    const args = bubblewrapArgs({ workingDirectory: '/tmp/work', writableRoots: ['/srv/cache'], network: false });
    assert.ok(args.indexOf('--tmpfs') < args.indexOf('--bind'), 'the bind must come after the tmpfs over /tmp');
    assert.deepEqual(args.slice(args.indexOf('--bind'), args.indexOf('--bind') + 6), [
      '--bind',
      '/tmp/work',
      '/tmp/work',
      '--bind',
      '/srv/cache',
      '/srv/cache',
    ]);
    assert.ok(!args.includes('--share-net'));
    assert.ok(bubblewrapArgs({ workingDirectory: '/w', writableRoots: [], network: true }).includes('--share-net'));
    for (const flag of ['--unshare-all', '--die-with-parent', '--new-session', '--proc', '--cap-drop']) assert.ok(args.includes(flag), flag);
    assert.equal(args.at(-1), '--');
  });
});
