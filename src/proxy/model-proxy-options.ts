import type { AgentBreaker } from '../breaker/agent-breaker.ts';
import { is, MAX_TIMER_MS, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link createModelProxy}. */
export interface ModelProxyOptions {
  /**
   * Base URL of the model API the proxy forwards to, with its version prefix,
   * e.g. `https://api.openai.com/v1`. A request for `/v1/<path>` goes to
   * `<upstream>/<path>`.
   */
  readonly upstream: string;
  /** The breaker that watches every session. Share its store between replicas to share sessions. */
  readonly breaker: AgentBreaker;
  /**
   * Serves `GET /metrics` (e.g. an OpenTelemetry Prometheus exporter's
   * handler). @default no `/metrics` endpoint
   */
  readonly metrics?: (request: Request) => Promise<Response>;
  /**
   * The `fetch` used upstream, with its own timeouts (Node's global `fetch`
   * gives up after 300 s without headers or without a further part of the
   * body). @default the proxy's own, limited by `upstreamTimeoutMs`
   */
  readonly fetch?: typeof fetch;
  /**
   * Longest wait for the upstream, in ms: for the headers of its answer, and
   * then between the parts of the answer (a long answer that keeps coming is
   * never cut); `0` waits as long as the client does. When it runs out, the
   * client gets a 502 in the API's format (or, in a stream, the API's error
   * event) and `onError` an `UpstreamUnreachableError` saying it timed out.
   * Checked about once a second. Not with a `fetch` of your own, which has its
   * own timeouts.
   *
   * The client's own timeout (10 minutes by default in the OpenAI and
   * Anthropic SDKs, none between the events of a stream) always bounds a
   * request, since the proxy gives up on the upstream when the client gives
   * up; a lower limit here would answer 502 to a request the client still
   * waits for, and SDKs retry a 502: the upstream would be asked, and billed,
   * twice. @default 0 (no limit)
   */
  readonly upstreamTimeoutMs?: number;
  /**
   * Told of every request the proxy could not serve: an upstream that did not
   * answer or broke off its answer (`UpstreamUnreachableError`, a 502 or an
   * error event in the stream), or an error of its own (a 500), e.g. to log
   * it. @default nothing
   */
  readonly onError?: (error: Error) => void;
  /**
   * Largest request body a governed route (`/v1/chat/completions`,
   * `/v1/messages`) reads, in bytes: the proxy holds the body to judge it, so
   * a larger one is refused with `413` in the API's error format before it is
   * read. Other routes stream their bodies upstream unread and unlimited.
   * @default 33_554_432 (32 MiB, the Anthropic Messages API's own limit)
   */
  readonly maxRequestBytes?: number;
}

/** Default of {@link ModelProxyOptions.maxRequestBytes}. */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/** One rule per option of {@link ModelProxyOptions}; the URL itself is checked where it is parsed. */
export const MODEL_PROXY_RULES: OptionRules<ModelProxyOptions> = {
  upstream: is.string({ nonEmpty: true }),
  breaker: is.having('an AgentBreaker', 'checkModelCall'),
  metrics: is.function(),
  fetch: is.function(),
  upstreamTimeoutMs: is.integer(0, MAX_TIMER_MS),
  onError: is.function(),
  maxRequestBytes: is.integer(1),
};
