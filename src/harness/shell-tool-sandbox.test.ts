import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { probeBubblewrap } from './sandbox.ts';
import { hostProcessesWith, outsideTmpDirectory } from '../test-support/sandbox-fixtures.ts';
import { shellTool, type ShellToolOptions } from './shell-tool.ts';

const probe = probeBubblewrap();
const skip = probe.usable ? false : `bubblewrap cannot run here: ${probe.reason}`;
if (skip) console.log(`# skipping the sandbox tests: ${skip}`);

let root: string;
let workingDirectory: string;
let outside: string;
before(() => {
  root = realpathSync(mkdtempSync(path.join(outsideTmpDirectory(), 'governor-sandbox-')));
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
    // Here, and only here, the model may be told that nothing survived.
    assert.match(result, /^timed out after 1000 ms: the command and every process it started were killed\n/);
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

  test("a link a command plants in the working directory never makes the host write through it (the auditor's scenario)", async () => {
    const victim = path.join(outside, 'existing');
    const before = snapshot(outside);
    await run('true');
    // The host used to rewrite .governor-tmp/.gitignore before each command, following this link.
    assert.match(await run(`ln -sf ${victim} .governor-tmp/.gitignore`), /^exit code: 0\n/);
    assert.match(await run('echo still works'), /^exit code: 0\nstill works\n$/);
    assert.equal(readFileSync(victim, 'utf8'), 'original\n');
    // The temporary directory itself a link to a host directory, then to one that does not exist yet.
    // (Inside the sandbox that host directory is hidden, so the link dangles there and the command is told.)
    await run(`rm -rf .governor-tmp && ln -s ${outside} .governor-tmp`);
    assert.match(await run('echo still works'), /^exit code: 0\n(?:note: .*\n)?still works\n$/);
    await run(`rm .governor-tmp && ln -s ${outside}/created .governor-tmp`);
    assert.match(await run('echo still works'), /still works\n$/);
    assert.equal(snapshot(outside), before);
    assert.equal(readFileSync(victim, 'utf8'), 'original\n');
    // A file where the directory should be: the command runs and says why HOME does not work.
    await run('rm .governor-tmp && echo > .governor-tmp');
    assert.match(await run('echo still works'), /^exit code: 0\nnote: .*\.governor-tmp \(HOME\) is not a directory\nstill works\n$/);
    await run('rm .governor-tmp');
    // And the directory comes back, with its .gitignore, when the command removed it.
    assert.match(await run('cat ~/.gitignore'), /^exit code: 0\n\*\n$/);
    assert.equal(lstatSync(path.join(workingDirectory, '.governor-tmp')).isDirectory(), true);
  });

  test('a bwrap a command plants in a directory on PATH is never started on the host', async () => {
    const planted = path.join(outside, 'planted-bwrap-ran');
    const fake = `#!/bin/sh\necho ran > ${planted}\n`;
    const savedPath = process.env['PATH'];
    try {
      await run(`mkdir -p bin && printf '${fake.replace(/\n/g, '\\n')}' > bin/bwrap && cp bin/bwrap bwrap && chmod +x bin/bwrap bwrap`);
      assert.equal(existsSync(path.join(workingDirectory, 'bin', 'bwrap')), true);
      // An absolute entry inside the working directory, and relative ones (the working directory itself).
      process.env['PATH'] = `${workingDirectory}/bin:.::bin:${savedPath}`;
      assert.match(await run('echo sandboxed'), /^exit code: 0\nsandboxed\n$/);
      assert.match(await run('echo sandboxed', { env: { PATH: `${workingDirectory}/bin:.:/usr/bin:/bin` } }), /^exit code: 0\nsandboxed\n$/);
      assert.equal(existsSync(planted), false);
    } finally {
      process.env['PATH'] = savedPath;
      rmSync(path.join(workingDirectory, 'bwrap'), { force: true });
      rmSync(path.join(workingDirectory, 'bin'), { recursive: true, force: true });
    }
  });

  test('loader variables reach the command, never bwrap, which runs on the host', async () => {
    // LD_DEBUG makes the dynamic loader report every library it loads for every program that holds it.
    const result = await run('echo "LD_DEBUG=$LD_DEBUG"', { env: { LD_DEBUG: 'libs' } });
    assert.match(result, /LD_DEBUG=libs/);
    assert.match(result, /calling init/, 'the command (the shell in the sandbox) holds it');
    assert.doesNotMatch(result, /bwrap|libcap|libselinux/, 'bwrap does not');
  });

  describe("the host's Unix sockets", () => {
    const servers: Server[] = [];
    const sockets: string[] = [];
    let homeDirectory: string | undefined;

    async function listen(socketPath: string): Promise<void> {
      const server = createServer((socket) => socket.end(`reply from the host at ${socketPath}\n`));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, resolve);
      });
      servers.push(server);
      if (!socketPath.startsWith('\0')) sockets.push(socketPath);
    }

    const connect = (socketPath: string): string =>
      `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect('${socketPath.replace('\0', '\\0')}'); print(s.recv(200).decode())"`;

    before(async () => {
      // Where services keep them (/run stands in for /var/run/docker.sock, /run/postgresql/.s.PGSQL.5432)...
      for (const directory of ['/run', process.env['XDG_RUNTIME_DIR']]) {
        try {
          if (directory === undefined) continue;
          accessSync(directory, constants.W_OK);
          await listen(path.join(directory, `governor-test-${process.pid}.sock`));
        } catch {
          // Not writable here.
        }
      }
      // ...in the home directory (an ssh control master, gpg-agent), or anywhere else...
      try {
        homeDirectory = mkdtempSync(path.join(homedir(), '.governor-socket-test-'));
      } catch {
        homeDirectory = mkdtempSync(path.join(root, 'home-'));
      }
      await listen(path.join(homeDirectory, 'agent.sock'));
      // ...in the working directory, and an abstract one.
      await listen(path.join(workingDirectory, `service-${process.pid}.sock`));
      await listen(`\0governor-test-${process.pid}`);
    });

    after(async () => {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      for (const socketPath of sockets) rmSync(socketPath, { force: true });
      if (homeDirectory !== undefined) rmSync(homeDirectory, { recursive: true, force: true });
    });

    test('cannot be connected to without the network', async () => {
      assert.ok(sockets.length >= 2, `sockets: ${sockets.join(', ')}`);
      for (const socketPath of [...sockets, `\0governor-test-${process.pid}`]) {
        const result = await run(connect(socketPath));
        assert.doesNotMatch(result, /reply from the host/, `${JSON.stringify(socketPath)}: ${result}`);
        assert.match(result, /^exit code: 1\n[\s\S]*(?:ConnectionRefusedError|FileNotFoundError|No such file)/, result);
      }
      // The working directory stays usable, and the commands' own sockets work.
      const own = `python3 -c "
import socket, os
srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect('own.sock'); a, _ = srv.accept(); a.send(b'own socket works'); print(c.recv(100).decode())
os.unlink('own.sock')"`;
      assert.match(await run(own), /^exit code: 0\nown socket works\n$/);
    });

    test('a host socket that goes away as the command starts does not fail it: bwrap is started again, the command runs once', async () => {
      const socketPath = path.join(homeDirectory ?? root, 'short-lived.sock');
      await listen(socketPath);
      sockets.splice(sockets.indexOf(socketPath), 1); // Not one for the other tests: it will be gone.
      // Removed right after the sandbox's arguments saw it, before bwrap mounts over it (the race, made certain).
      const patchable = fs as { lstatSync: typeof fs.lstatSync };
      const realLstat = fs.lstatSync;
      let removed = false;
      patchable.lstatSync = ((target: fs.PathLike, ...rest: unknown[]) => {
        const stat = (realLstat as (...args: unknown[]) => unknown)(target, ...rest);
        if (target === socketPath && !removed) {
          removed = true;
          fs.unlinkSync(socketPath);
        }
        return stat;
      }) as typeof fs.lstatSync;
      syncBuiltinESMExports();
      try {
        assert.match(await run('echo ran >> runs.txt; echo done'), /^exit code: 0\ndone\n$/);
      } finally {
        patchable.lstatSync = realLstat;
        syncBuiltinESMExports();
      }
      assert.equal(removed, true);
      assert.equal(readFileSync(path.join(workingDirectory, 'runs.txt'), 'utf8'), 'ran\n');
      rmSync(path.join(workingDirectory, 'runs.txt'));
    });

    test('(the control) the same sockets answer with network: true', async () => {
      for (const socketPath of sockets) assert.match(await run(connect(socketPath), { network: true }), /reply from the host/, socketPath);
    });
  });
});
