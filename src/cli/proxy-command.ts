import { MAX_TIMER_MS } from '../errors/validate-options.ts';
import { startModelProxy } from '../proxy/model-proxy-server.ts';
import { prometheusMetrics, type PrometheusMetrics } from '../proxy/prometheus-metrics.ts';
import { breakerFromFlags, type FlagBreaker, untilSignal } from './breaker-flags.ts';
import { parseCommandArgs } from './command-args.ts';
import { startExitCode, writeCommandError } from './command-error.ts';
import { checkBreakerStore, logBreaker } from './log-breaker.ts';
import type { CliIO } from './progress.ts';
import { PROXY_USAGE } from './commands/proxy.ts';
import { serverLog } from './server-log.ts';

/**
 * `governor proxy …`: serves the model proxy until SIGINT or SIGTERM.
 * Resolves to the exit code.
 */
export async function runProxyCommand(argv: readonly string[], io: CliIO, cwd = process.cwd()): Promise<number> {
  let values: ReturnType<typeof parseProxyArgs>['values'];
  try {
    ({ values } = parseProxyArgs(argv));
  } catch (error) {
    writeCommandError(io, 'proxy', error, PROXY_USAGE);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${PROXY_USAGE}\n`);
    return 0;
  }
  const usageError = (problem: string): number => {
    writeCommandError(io, 'proxy', problem, PROXY_USAGE);
    return 2;
  };
  const port = wholeNumber(values.port);
  const maxBytesFlag = values['max-request-bytes'];
  const maxRequestBytes = maxBytesFlag === undefined ? undefined : wholeNumber(maxBytesFlag);
  if (values.upstream === undefined) return usageError('--upstream URL is required');
  if (port === undefined || port > 65_535) return usageError(`--port must be a port number (0-65535), not "${values.port}"`);
  if (maxBytesFlag !== undefined && !maxRequestBytes) {
    return usageError(`--max-request-bytes must be a positive whole number of bytes (e.g. 33554432 for 32 MiB), not "${maxBytesFlag}"`);
  }
  const timeoutFlag = values['upstream-timeout'];
  const upstreamTimeout = timeoutFlag === undefined ? undefined : wholeNumber(timeoutFlag);
  if (timeoutFlag !== undefined && (upstreamTimeout === undefined || upstreamTimeout > MAX_UPSTREAM_TIMEOUT_SECONDS)) {
    return usageError(
      `--upstream-timeout must be a whole number of seconds from 0 (no limit) to ${MAX_UPSTREAM_TIMEOUT_SECONDS} (about 24.8 days), not "${timeoutFlag}"`,
    );
  }
  let metrics: PrometheusMetrics | undefined;
  let flagBreaker: FlagBreaker;
  try {
    if (values.metrics) metrics = await prometheusMetrics();
    flagBreaker = await breakerFromFlags(
      {
        config: values.config,
        store: values.store,
        storePrefix: values['store-prefix'],
        storeTimeout: values['store-timeout'],
        ...(metrics === undefined ? {} : { telemetry: true }),
      },
      cwd,
    );
  } catch (error) {
    await metrics?.shutdown();
    writeCommandError(io, 'proxy', error);
    return startExitCode(error);
  }
  const log = serverLog(io, 'proxy');
  let stopLogging = (): void => {};
  try {
    const server = await startModelProxy({
      upstream: values.upstream,
      breaker: flagBreaker.breaker,
      port,
      host: values.host,
      closeGraceMs: CLOSE_GRACE_MS,
      ...(maxRequestBytes === undefined ? {} : { maxRequestBytes }),
      ...(upstreamTimeout === undefined ? {} : { upstreamTimeoutMs: upstreamTimeout * 1000 }),
      ...(metrics === undefined ? {} : { metrics: metrics.handler }),
      // The proxy's own errors start with its name already.
      onError: (error) => log(error.message.replace(/^governor proxy: /, '')),
    });
    stopLogging = logBreaker(flagBreaker.breaker, log);
    io.stderr.write(`governor proxy listening on ${server.url} (base URL ${server.url}/v1) → ${new URL(values.upstream).origin}\n`);
    // Serving does not wait for it: a store that does not answer takes up to its timeout to say so.
    const checked = checkBreakerStore(flagBreaker.breaker, log);
    const signal = await untilSignal();
    await checked;
    io.stderr.write(`governor proxy: ${signal}, closing\n`);
    const { cutOff } = await server.close();
    if (cutOff > 0)
      log(`${cutOff} request${cutOff === 1 ? '' : 's'} still in flight after ${CLOSE_GRACE_MS / 1000} s ${cutOff === 1 ? 'was' : 'were'} cut off`);
    return 0;
  } catch (error) {
    writeCommandError(io, 'proxy', error);
    // A malformed --upstream is a usage error; a port in use is not.
    return startExitCode(error);
  } finally {
    stopLogging();
    await flagBreaker.close();
    await metrics?.shutdown();
  }
}

/** The longest `--upstream-timeout`, in whole seconds: the proxy's limit is a timer's, at most {@link MAX_TIMER_MS}. */
const MAX_UPSTREAM_TIMEOUT_SECONDS = Math.floor(MAX_TIMER_MS / 1000);

/** How long answers in flight are let finish when the proxy closes, in ms. */
const CLOSE_GRACE_MS = 10_000;

/** The arguments of `governor proxy`; throws on an unknown or malformed option. */
function parseProxyArgs(argv: readonly string[]) {
  return parseCommandArgs(
    argv,
    {
      upstream: { type: 'string' },
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      config: { type: 'string' },
      store: { type: 'string' },
      'store-prefix': { type: 'string' },
      'store-timeout': { type: 'string' },
      metrics: { type: 'boolean', default: false },
      'max-request-bytes': { type: 'string' },
      'upstream-timeout': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    false,
    // governor mcp's flag: here each request names its session, so the flag is not a typo of another.
    { session: 'The proxy takes the session of each request from its x-governor-session header (see Session below).' },
  );
}

/** A flag's whole number, or undefined for anything else ('' and '1e3' included). */
function wholeNumber(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}
