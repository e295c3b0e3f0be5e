import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { replaceReadBuffer } from './limited-read-buffer.ts';
import type { McpServerExit } from './server-exit.ts';

/** What the transport needs of its read buffer: the MCP SDK's `ReadBuffer`, or a `LimitedReadBuffer`. */
interface MessageReader {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

/** The MCP SDK's `client/stdio.js`, as far as a command's transport needs it. */
export interface SdkStdio {
  readonly StdioClientTransport: typeof StdioClientTransport;
  readonly getDefaultEnvironment: typeof getDefaultEnvironment;
}

/** An MCP server to run as a command, and the read buffer its output is read with. */
export interface CommandTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to the MCP SDK's default environment, as the SDK's own transport does. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly readBuffer: MessageReader;
}

/** How long the server is given to end once its input has ended, and once it has been sent SIGTERM: the MCP SDK's own times. */
const GRACE_MS = 2_000;

/** Resolves to whether `promise` settled within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([promise.then(() => true), timedOut]);
  clearTimeout(timer);
  return settled;
}

/**
 * The MCP SDK's stdio client transport, but for a server that runs as the
 * leader of a process group of its own, which closing ends as a whole. A
 * command is often a wrapper (`npx`, `uvx`, `sh -c`) whose child is the
 * real server: the SDK's transport signals only the wrapper, and a server
 * that outlives the end of its input (a file watcher, a pool) is left
 * running, holding the output pipe, which keeps this process running too.
 *
 * Closing ends the input, gives the group 2 s to close the output (every
 * process holding it has then exited), then sends SIGTERM to the group,
 * 2 s more, then SIGKILL; a group that closed the output in time is sent
 * SIGTERM, for any process of it that let go of the output and stayed, and
 * SIGKILL should one still be there 2 s later.
 * The output is let go of either way: a process that left the group (a
 * daemon of the server's) cannot keep this one running. POSIX only.
 */
class ProcessGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #options: CommandTransportOptions;
  #child: ChildProcess | undefined;
  /** Settles once the leader has exited and the output is closed. */
  #ended: Promise<void> | undefined;
  #stopWatchingExit = (): void => {};
  #exit: McpServerExit | undefined;

  constructor(options: CommandTransportOptions) {
    this.#options = options;
  }

  /** How the server ended, once it has (its output closed too); undefined while it runs. */
  get exit(): McpServerExit | undefined {
    return this.#exit;
  }

  /** The server's input, while it runs. */
  get stdin(): Writable | undefined {
    return this.#child?.stdin ?? undefined;
  }

  async start(): Promise<void> {
    if (this.#ended !== undefined) throw new Error('ProcessGroupTransport already started');
    const { command, args, env, cwd, readBuffer } = this.#options;
    // Detached: the leader of a new process group (and session), so that the group can be signalled without this process.
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'inherit'], detached: true });
    this.#child = child;
    // Should this process exit before closing ends the group (a second Ctrl-C, process.exit), the group goes with it.
    const endGroupOnExit = (): void => void this.#signal(child, 'SIGKILL');
    process.on('exit', endGroupOnExit);
    this.#ended = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.#exit = { code, signal };
        this.#child = undefined;
        resolve();
        this.onclose?.();
      }),
    );
    this.#stopWatchingExit = () => process.off('exit', endGroupOnExit);
    child.stdin.on('error', (error) => this.onerror?.(error));
    child.stdout.on('error', (error) => this.onerror?.(error));
    child.stdout.on('data', (chunk: Buffer) => {
      try {
        readBuffer.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        void this.close();
        return;
      }
      for (;;) {
        try {
          const message = readBuffer.readMessage();
          if (message === null) break;
          this.onmessage?.(message);
        } catch (error) {
          // A line that is not a message (or one over the limit): told of, and the next one read, as the SDK does.
          this.onerror?.(error as Error);
        }
      }
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.stdin;
    if (stdin === undefined) throw new Error('Not connected');
    if (!stdin.write(`${JSON.stringify(message)}\n`)) await new Promise((resolve) => stdin.once('drain', resolve));
  }

  async close(): Promise<void> {
    const child = this.#child;
    const ended = this.#ended;
    this.#child = undefined;
    if (child === undefined || ended === undefined) return;
    child.stdin?.end();
    const closedInTime = await within(ended, GRACE_MS);
    this.#signal(child, 'SIGTERM');
    // A process of the group that let go of the output and ignores SIGTERM is not left running either.
    if (!(await (closedInTime ? this.#groupGone(child, GRACE_MS) : within(ended, GRACE_MS)))) this.#signal(child, 'SIGKILL');
    child.stdout?.destroy();
    this.#stopWatchingExit();
    this.#options.readBuffer.clear();
  }

  /** Whether no process of the group `child` leads is left within `ms` (looked at every 50 ms). */
  async #groupGone(child: ChildProcess, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (this.#signal(child, 0)) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return true;
  }

  /** Sends `signal` to the process group `child` leads; whether any process of it was left to send it to. */
  #signal(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
    if (child.pid === undefined) return false;
    try {
      process.kill(-child.pid, signal);
      return true;
    } catch {
      // ESRCH: no process of the group is left.
      return false;
    }
  }
}

/**
 * The transport to an MCP server run as a command, and the server's input
 * once it runs: a {@link ProcessGroupTransport} on POSIX; on Windows, which
 * has no process groups to signal, the MCP SDK's own transport with
 * `readBuffer` put in place of its own.
 */
export function commandTransport(
  sdk: SdkStdio,
  options: CommandTransportOptions,
): { transport: Transport; stdin: () => Writable | null | undefined; exit: () => McpServerExit | undefined } {
  const env = { ...sdk.getDefaultEnvironment(), ...options.env };
  if (process.platform !== 'win32') {
    const transport = new ProcessGroupTransport({ ...options, env });
    return { transport, stdin: () => transport.stdin, exit: () => transport.exit };
  }
  const transport = new sdk.StdioClientTransport({
    command: options.command,
    args: [...options.args],
    env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stderr: 'inherit',
  });
  replaceReadBuffer(transport, options.readBuffer);
  // The child's stdin, a private field of the SDK's transport; without it (another version), its own send writes the message.
  // How it ended is not known there: the SDK's transport does not say.
  return { transport, stdin: () => (transport as unknown as { _process?: { stdin?: Writable | null } })._process?.stdin, exit: () => undefined };
}
