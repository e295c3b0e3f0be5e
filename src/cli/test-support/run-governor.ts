import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin.ts', import.meta.url));
const WITHOUT_PACKAGES = fileURLToPath(new URL('./without-packages.ts', import.meta.url));

/** The environment without any model configuration, as on a fresh machine. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI|ANTHROPIC|GOVERNOR)_/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** What `governor …` printed and exited with. */
export interface GovernorOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `governor …` as a user runs it, in a process of its own (by default with
 * {@link cleanEnv}); `without` names packages to run it as if they were not
 * installed (see without-packages.ts).
 */
export async function runGovernor(
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly without?: string; readonly timeoutMs?: number } = {},
): Promise<GovernorOutcome> {
  const env = options.env ?? cleanEnv();
  const preload = options.without === undefined ? [] : ['--import', WITHOUT_PACKAGES];
  try {
    const { stdout, stderr } = await run(process.execPath, [...preload, BIN, ...args], {
      env: options.without === undefined ? env : { ...env, GOVERNOR_TEST_WITHOUT: options.without },
      cwd: options.cwd,
      timeout: options.timeoutMs ?? 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
