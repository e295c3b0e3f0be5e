import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bubblewrapArgs, probeBubblewrap, socketDirectories } from './sandbox.ts';

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
    assert.deepEqual(warnings, [
      'WARNING GOVERNOR_NO_SANDBOX commands run without a sandbox, and can read the environment of this process: bwrap is not installed (not found on PATH)',
    ]);
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

  test('bwrap is looked up only in absolute PATH directories: one in the current directory is never run', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'planted-bwrap-'));
    try {
      const marker = path.join(dir, 'ran');
      writeFileSync(path.join(dir, 'bwrap'), `#!/bin/sh\necho ran > ${marker}\n`);
      chmodSync(path.join(dir, 'bwrap'), 0o755);
      const { stdout } = await run(
        process.execPath,
        ['--input-type=module', '-e', `const { probeBubblewrap } = await import(${JSON.stringify(harness)}); console.log(JSON.stringify(probeBubblewrap()));`],
        { cwd: dir, env: { PATH: '.::bwrap-dir' } },
      );
      assert.deepEqual(JSON.parse(stdout), { usable: false, reason: 'bwrap is not installed (not found on PATH)' });
      assert.equal(existsSync(marker), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('without the network, the socket directories are hidden and every listening host socket is covered, after the binds', async () => {
    const probe = probeBubblewrap();
    const savedRuntime = process.env['XDG_RUNTIME_DIR'];
    // Somewhere outside the directories hidden anyway, as a user's runtime directory may be.
    const runtime = realpathSync(mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : homedir(), 'runtime-')));
    const work = realpathSync(mkdtempSync(path.join(tmpdir(), 'work-')));
    const server = createServer();
    try {
      process.env['XDG_RUNTIME_DIR'] = runtime;
      const socketPath = path.join(work, 'service.sock');
      await new Promise<void>((resolve) => server.listen(socketPath, resolve));
      const args = bubblewrapArgs({ workingDirectory: work, writableRoots: [], network: false });
      if (probe.usable) assert.equal(args[0], probe.path);
      assert.ok(path.isAbsolute(args[0] ?? ''), args[0]);
      const tmpfs = args.flatMap((arg, i) => (arg === '--tmpfs' ? [args[i + 1]] : []));
      for (const directory of ['/tmp', realpathSync('/run'), realpathSync('/var/tmp'), runtime]) assert.ok(tmpfs.includes(directory), directory);
      assert.deepEqual(socketDirectories(), tmpfs.slice(1).sort());
      const cover = args.findIndex((arg, i) => arg === '--ro-bind' && args[i + 1] === '/dev/null' && args[i + 2] === socketPath);
      assert.ok(cover > args.lastIndexOf('--bind'), 'the socket is covered after the working directory is mounted');
      assert.ok(args.lastIndexOf('--tmpfs') < args.indexOf('--bind'));
      // With the network, only /tmp is private and no socket is covered.
      const shared = bubblewrapArgs({ workingDirectory: work, writableRoots: [], network: true });
      assert.deepEqual(
        shared.flatMap((arg, i) => (arg === '--tmpfs' ? [shared[i + 1]] : [])),
        ['/tmp'],
      );
      assert.ok(!shared.includes('/dev/null'));
    } finally {
      await new Promise((resolve) => server.close(resolve));
      if (savedRuntime === undefined) delete process.env['XDG_RUNTIME_DIR'];
      else process.env['XDG_RUNTIME_DIR'] = savedRuntime;
      rmSync(runtime, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    }
  });
});
