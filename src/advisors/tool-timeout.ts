import { GovernorError } from '../errors/governor-error.ts';

/** Time a tool call may take when neither `toolTimeoutMs` nor a per-tool override says otherwise. */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;

/** A tool call ran past its time limit; the model sees it as the call's error result. */
export class ToolTimeoutError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_TIMEOUT';
  readonly toolName: string;
  readonly timeoutMs: number;

  constructor(toolName: string, timeoutMs: number) {
    super('GOVERNOR_TOOL_TIMEOUT', `Tool "${toolName}" timed out after ${timeoutMs} ms and was cancelled.`);
    this.toolName = toolName;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Runs a tool with a signal that fires on the caller's abort or at the time
 * limit, and settles as soon as either happens — whether or not the tool heeds
 * its signal. A tool that ignores it keeps running detached; its late result
 * or error is dropped.
 */
export function runWithTimeout<T>(
  run: (signal: AbortSignal) => PromiseLike<T>,
  { toolName, timeoutMs, abortSignal }: { toolName: string; timeoutMs: number; abortSignal: AbortSignal | undefined },
): Promise<T> {
  const own = new AbortController();
  const signal = abortSignal ? AbortSignal.any([abortSignal, own.signal]) : own.signal;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => own.abort(new ToolTimeoutError(toolName, timeoutMs)), timeoutMs);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    let started: PromiseLike<T>;
    try {
      started = run(signal);
    } catch (error) {
      settle();
      reject(error);
      return;
    }
    Promise.resolve(started).then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}
