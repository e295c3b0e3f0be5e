import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { exitOf, killAll, pidIn, pidsIn, stillRunning } from '../mcp-proxy/test-support/processes.ts';

const GOVERNOR = fileURLToPath(new URL('./bin.ts', import.meta.url));
const LINGERING = fileURLToPath(new URL('../mcp-proxy/test-support/lingering-server.ts', import.meta.url));

/** Well past the 2 s the server is given after its input ends, and the 2 s after SIGTERM. */
const EXIT_WITHIN_MS = 12_000;

/** `governor mcp -- ARGS`, spoken to over its stdio as an MCP client does; its stderr collected. */
function governorMcp(args: string[]): { child: ChildProcessWithoutNullStreams; log: () => string; serving: () => Promise<void> } {
  const child = spawn(process.execPath, [GOVERNOR, 'mcp', '--', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const answer = async (): Promise<unknown> => JSON.parse(String((await lines.next()).value));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  /** Resolves once a call has been served through the proxy: the server runs. */
  const serving = async (): Promise<void> => {
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    assert.equal(((await answer()) as { id?: unknown }).id, 1, log);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } });
    assert.deepEqual(await answer(), { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '3' }] } }, log);
  };
  return { child, log: () => log, serving };
}

describe('governor mcp -- <a wrapper> <a server that outlives the end of its input>', { skip: process.platform === 'win32' }, () => {
  /** Wrappers that stay between the proxy and the server, as `npx` and a shell running more than one command do. */
  const wrappers: Record<string, (wrapperPid: string, serverPid: string) => string[]> = {
    'sh -c': (wrapperPid, serverPid) => [
      'sh',
      '-c',
      'echo $$ > "$1"; "$2" "$3" "$4"; echo "server ended" >&2',
      'sh',
      wrapperPid,
      process.execPath,
      LINGERING,
      serverPid,
    ],
    'a node program that runs the server as its child (as npx does)': (wrapperPid, serverPid) => [
      process.execPath,
      '-e',
      `require('node:fs').writeFileSync(process.argv[1], String(process.pid));
       require('node:child_process').spawn(process.argv[2], [process.argv[3], process.argv[4]], { stdio: 'inherit' }).on('exit', (code) => process.exit(code ?? 1));`,
      wrapperPid,
      process.execPath,
      LINGERING,
      serverPid,
    ],
  };
  const ends = {
    'the client closes its input': (child: ChildProcessWithoutNullStreams) => child.stdin.end(),
    'SIGTERM to governor mcp': (child: ChildProcessWithoutNullStreams) => child.kill('SIGTERM'),
  };
  for (const [wrapper, command] of Object.entries(wrappers)) {
    for (const [end, doEnd] of Object.entries(ends)) {
      test(`${wrapper}, ${end}: governor mcp exits 0 in bounded time, and no process it started is left`, { timeout: 40_000 }, async () => {
        const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
        const pidFiles = [join(dir, 'wrapper.pid'), join(dir, 'server.pid')] as const;
        let started: ChildProcessWithoutNullStreams | undefined;
        try {
          const { child, log, serving } = governorMcp(command(...pidFiles));
          started = child;
          await serving();
          const pids = [await pidIn(pidFiles[0]), await pidIn(pidFiles[1])];
          doEnd(child);
          const exit = await exitOf(child, EXIT_WITHIN_MS);
          assert.deepEqual(exit, { code: 0, signal: null }, log());
          assert.deepEqual(await stillRunning(pids), [], `still running of [wrapper, server] ${pids}`);
        } finally {
          killAll([started?.pid, ...pidsIn(pidFiles)]);
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
  }

  test('a second SIGTERM while it closes: governor mcp exits at once (143), and the group it started goes with it', { timeout: 40_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
    const pidFiles = [join(dir, 'wrapper.pid'), join(dir, 'server.pid')] as const;
    // A server that ignores SIGTERM too: closing would wait for its SIGKILL, 4 s on.
    const command = [
      'sh',
      '-c',
      'echo $$ > "$1"; "$2" "$3" "$4" stubborn; echo "server ended" >&2',
      'sh',
      pidFiles[0],
      process.execPath,
      LINGERING,
      pidFiles[1],
    ];
    let started: ChildProcessWithoutNullStreams | undefined;
    try {
      const { child, log, serving } = governorMcp(command);
      started = child;
      await serving();
      const pids = [await pidIn(pidFiles[0]), await pidIn(pidFiles[1])];
      child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill('SIGTERM');
      assert.deepEqual(await exitOf(child, 1_500), { code: 143, signal: null }, log());
      assert.deepEqual(await stillRunning(pids), [], `still running of [wrapper, server] ${pids}`);
    } finally {
      killAll([started?.pid, ...pidsIn(pidFiles)]);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a server that left the process group and holds the output: governor mcp exits 0 once the client has gone; the wrapper is ended', {
    timeout: 40_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'governor-mcp-'));
    const pidFiles = [join(dir, 'wrapper.pid'), join(dir, 'server.pid')] as const;
    // A daemon-like start: the server runs in a session of its own, out of reach of signals to the group, and keeps the stdout it was given.
    const escaping = `require('node:fs').writeFileSync(process.argv[1], String(process.pid));
      require('node:child_process').spawn(process.argv[2], [process.argv[3], process.argv[4]], { stdio: 'inherit', detached: true });
      setInterval(() => {}, 60_000);`;
    let started: ChildProcessWithoutNullStreams | undefined;
    try {
      const { child, log, serving } = governorMcp([process.execPath, '-e', escaping, pidFiles[0], process.execPath, LINGERING, pidFiles[1]]);
      started = child;
      await serving();
      const wrapperPid = await pidIn(pidFiles[0]);
      child.stdin.end();
      assert.deepEqual(await exitOf(child, EXIT_WITHIN_MS), { code: 0, signal: null }, log());
      assert.deepEqual(await stillRunning([wrapperPid]), []);
    } finally {
      killAll([started?.pid, ...pidsIn(pidFiles)]);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
