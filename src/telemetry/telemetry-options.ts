import { InvalidOptionError } from '../errors/governor-error.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import type { AdvisorContext } from '../chat/advisor-context.ts';
import { mergePrices, type PriceTable } from '../model/pricing.ts';

/**
 * OpenTelemetry settings of a ChatClient (`builder.telemetry(...)`), an
 * AgentLoop (`telemetry` option) or one request (the `TELEMETRY` advisor param).
 * Spans and metrics go through `@opentelemetry/api` only: without a registered
 * SDK they cost next to nothing and record nothing.
 */
export interface TelemetryOptions {
  /** Emit spans and metrics. @default true */
  readonly enabled?: boolean;
  /**
   * Record prompts, system instructions, answers, tool arguments and tool
   * results on spans (`gen_ai.input.messages`, `gen_ai.output.messages`,
   * `gen_ai.system_instructions`, `gen_ai.tool.call.arguments`,
   * `gen_ai.tool.call.result`), with secrets redacted. Off by default because
   * prompts often hold personal data.
   * @default false, or true when the environment variable
   * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`
   */
  readonly recordContent?: boolean;
  /** Longest recorded content attribute, in characters; longer content is cut with a note. @default 16_384 */
  readonly maxContentLength?: number;
  /** Prices for the `governor.cost` counter, merged over `DEFAULT_PRICES`. @default DEFAULT_PRICES */
  readonly prices?: PriceTable;
  /** Model id to price calls with (e.g. when a deployment name hides the model). @default the model id the provider answered with */
  readonly priceModelId?: string;
}

/**
 * Advisor param holding the {@link TelemetryOptions} of a request (the
 * builder's `telemetry(...)` sets it for a client). An options object is read
 * once; pass a new object rather than changing one in use.
 */
export const TELEMETRY = 'governor.telemetry';

/** {@link TelemetryOptions} with defaults filled in. */
export interface TelemetrySettings {
  readonly enabled: boolean;
  readonly recordContent: boolean;
  readonly maxContentLength: number;
  readonly prices: PriceTable | undefined;
  readonly priceModelId: string | undefined;
}

const CONTENT_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';
const DEFAULT_MAX_CONTENT_LENGTH = 16_384;

let processDefaults: TelemetrySettings | undefined;

function defaults(): TelemetrySettings {
  processDefaults ??= {
    enabled: true,
    recordContent: process.env[CONTENT_ENV]?.trim().toLowerCase() === 'true',
    maxContentLength: DEFAULT_MAX_CONTENT_LENGTH,
    prices: undefined,
    priceModelId: undefined,
  };
  return processDefaults;
}

const TELEMETRY_RULES: OptionRules<TelemetryOptions> = {
  enabled: is.boolean(),
  recordContent: is.boolean(),
  maxContentLength: is.integer(1),
  // Checked price by price, naming the bad one.
  prices: (value) => {
    mergePrices(value as PriceTable);
  },
  priceModelId: is.string({ nonEmpty: true }),
};

/**
 * Checks telemetry options, naming the bad one (`telemetry.maxContentLength`, …).
 * @throws InvalidOptionError
 */
export function validateTelemetryOptions(options: TelemetryOptions, prefix = 'telemetry'): TelemetryOptions {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError(prefix, 'must be an object');
  validateOptions('telemetry', options, TELEMETRY_RULES, { prefix });
  return options;
}

/**
 * Whether content is recorded when no request says otherwise (the
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` environment variable);
 * for sinks that have no request at hand, such as breaker events.
 */
export function recordsContentByDefault(): boolean {
  return defaults().recordContent;
}

const resolved = new WeakMap<object, TelemetrySettings>();

/** The settings in force for a request: its `TELEMETRY` param over the process defaults. */
export function telemetrySettings(context: AdvisorContext): TelemetrySettings {
  const options = context.get(TELEMETRY);
  if (options === undefined || options === null || typeof options !== 'object') return defaults();
  let settings = resolved.get(options);
  if (settings === undefined) {
    const o = options as TelemetryOptions;
    const base = defaults();
    // A request param is not validated like the builder's options: anything unexpected falls back to the default.
    const max = o.maxContentLength;
    settings = {
      enabled: typeof o.enabled === 'boolean' ? o.enabled : base.enabled,
      recordContent: typeof o.recordContent === 'boolean' ? o.recordContent : base.recordContent,
      maxContentLength: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : base.maxContentLength,
      prices: o.prices !== null && typeof o.prices === 'object' ? o.prices : undefined,
      priceModelId: typeof o.priceModelId === 'string' && o.priceModelId !== '' ? o.priceModelId : undefined,
    };
    resolved.set(options, settings);
  }
  return settings;
}
