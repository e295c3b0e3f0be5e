import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { probeBubblewrap } from './sandbox.ts';
import { shellTool, type ShellToolOptions } from './shell-tool.ts';

const probe = probeBubblewrap();
const skip = probe.usable ? false : `bubblewrap cannot run here: ${probe.reason}`;
if (skip) console.log(`# skipping the sandbox tests: ${skip}`);

/**
 * A base directory outside /tmp where possible: the sandbox gives commands a
 * private /tmp, so a target under /tmp would not even be visible to them.
 */
function baseDirectory(): string {
  for (const candidate of ['/var/tmp', tmpdir()]) {
    try {
      accessSync(candidate, constants.W_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return tmpdir();
}

let root: string;
let workingDirectory: string;
let outside: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(baseDirectory(), 'governor-sandbox-')));
  workingDirectory = path.join(root, 'work');
  outside = path.join(root, 'outside');
  mkdirSync(workingDirectory);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'existing'), 'original\n');
});
after(() => rmSync(root, { recursive: true, force: true }));

async function run(command: string, options: Partial<ShellToolOptions> = {}): Promise<string> {
  const shell = shellTool({ workingDirectory, sandbox: 'bubblewrap', ...options });
  assert.ok(shell.execute);
  return (await shell.execute({ command }, { toolCallId: 'call-1', messages: [], context: undefined })) as string;
}

/** Every file under `directory` with its size and modification time. */
function snapshot(directory: string): string {
  const entries: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const stat = statSync(full);
      entries.push(`${path.relative(directory, full)} ${stat.size} ${stat.mtimeMs} ${stat.nlink}`);
      if (stat.isDirectory()) walk(full);
    }
  };
  walk(directory);
  return entries.join('\n');
}

/** Host processes whose command line contains `marker`. */
function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(Number(pid));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

describe('shellTool under the bubblewrap sandbox', { skip }, () => {
  test('no way of reading the environment shows a variable of the host process', async () => {
    process.env['GOVERNOR_PLANTED_SECRET'] = 'planted-9d1c5e0b7a';
    process.env['GOVERNOR_PLANTED_PLAIN'] = 'plain-4f2a6c';
    try {
      const commands = [
        'env',
        'printenv',
        'tr "\\0" "\\n" < /proc/$PPID/environ',
        'tr "\\0" "\\n" < /proc/1/environ',
        'for f in /proc/*/environ; do tr "\\0" "\\n" < "$f"; done',
        'ps eww -A',
        'cat /proc/self/environ',
      ];
      for (const command of commands) {
        const result = await run(command, { env: { GIVEN: 'given-value' } });
        assert.doesNotMatch(result, /planted-9d1c5e0b7a|plain-4f2a6c/, command);
        if (command === 'env') assert.match(result, /GIVEN=given-value/);
      }
    } finally {
      delete process.env['GOVERNOR_PLANTED_SECRET'];
      delete process.env['GOVERNOR_PLANTED_PLAIN'];
    }
  });

  test('sees only its own processes', async () => {
    const result = await run('ls /proc | grep -c "^[0-9]"');
    assert.ok(Number(/\n(\d+)/.exec(result)?.[1]) < 10, result);
  });

  test('escape attempts change nothing outside the working directory', async () => {
    const hostTmpMarker = path.join(tmpdir(), `governor-escape-${process.pid}`);
    const o = outside;
    const attempts = [
      `ln -s ${o}/symlinked link1; echo x > link1`,
      `ln ${o}/existing hard; echo pwned >> hard`,
      `D=${o}; echo x > "$D/variable"`,
      `echo ${o}/xargs | xargs touch`,
      `python3 -c "open('${o}/python','w').write('x')"`,
      `${process.execPath} -e "require('fs').writeFileSync('${o}/node','x')"`,
      `perl -e 'open(F, ">", "${o}/perl") or die $!; print F "x"'`,
      `awk 'BEGIN { print "x" > "${o}/awk" }'`,
      `echo x | sed -n "w ${o}/sed"`,
      `sqlite3 ${o}/sqlite.db "create table t(x)"`,
      `git init -q repo && git clone -q repo ${o}/clone`,
      `printf 'all:\\n\\ttouch ${o}/make\\n' > Makefile && make`,
      `printf '#!/bin/sh\\necho x > ${o}/script\\n' > s.sh && chmod +x s.sh && ./s.sh`,
      `cd ${o} && touch cd`,
      `echo pwned > ${o}/existing; cp /etc/hostname ${o}/cp; tee ${o}/tee < /etc/hostname`,
      `mount -o remount,rw / ; umount /tmp; touch ${o}/mount; echo x > ${hostTmpMarker}`,
    ];
    assert.equal(attempts.length, 16);
    const before = snapshot(outside);
    for (const command of attempts) await run(command);
    assert.equal(snapshot(outside), before);
    assert.equal(readFileSync(path.join(outside, 'existing'), 'utf8'), 'original\n');
    assert.equal(existsSync(hostTmpMarker), false);
    // The working directory itself is writable.
    assert.ok(existsSync(path.join(workingDirectory, 'Makefile')));
  });

  test('a daemonised grandchild is gone after the timeout', async () => {
    const marker = `7${process.pid}.25`;
    const command = `python3 -c "import os,time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', '${marker}'])
" ; setsid sleep ${marker} & sleep 60`;
    const result = await run(command, { commandTimeoutMs: 1_000, killGraceMs: 100 });
    assert.match(result, /timed out after 1000 ms/);
    for (let i = 0; i < 50 && hostProcessesWith(marker).length > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(hostProcessesWith(marker), []);
  });

  test('processes a command leaves behind end with it', async () => {
    const marker = `8${process.pid}.5`;
    const result = await run(`setsid sleep ${marker} > /dev/null 2>&1 & echo started`);
    assert.match(result, /^exit code: 0\n/);
    for (let i = 0; i < 50 && hostProcessesWith(marker).length > 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(hostProcessesWith(marker), []);
  });

  test('/tmp is private and the network is off unless asked for', async () => {
    let server: Server | undefined;
    try {
      server = createServer((socket) => socket.end('hello from the host\n'));
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as { port: number }).port;
      const connect = `python3 -c "import socket; s = socket.create_connection(('127.0.0.1', ${port}), 2); print(s.recv(100).decode())"`;
      assert.doesNotMatch(await run(connect), /hello from the host/);
      assert.match(await run(connect, { network: true }), /hello from the host/);
      writeFileSync(path.join(tmpdir(), `governor-host-tmp-${process.pid}`), 'x');
      assert.match(await run(`ls -A /tmp | wc -l; ls /tmp/governor-host-tmp-${process.pid}`), /^exit code: [1-9]\d*\n0\n/);
    } finally {
      rmSync(path.join(tmpdir(), `governor-host-tmp-${process.pid}`), { force: true });
      server?.close();
    }
  });

  test('HOME is the private directory in the working directory, and it persists between commands', async () => {
    await run('echo kept > ~/note');
    assert.match(await run('echo "$HOME"; cat ~/note'), new RegExp(`${workingDirectory}/\\.governor-tmp\\nkept`));
  });
});
