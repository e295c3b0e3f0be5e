import { AdvisorOrder } from '../chat/advisor.ts';
import type { Advisor } from '../chat/advisor.ts';
import { beforeAfterAdvisor } from '../chat/before-after-advisor.ts';
import { conversationIdOf } from '../chat/advisor-context.ts';
import { loggedMessages } from './logged-messages.ts';
import { totalTokens } from '../model/usage.ts';
import { redact, redactValue } from '../redaction/redact.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** One structured log record. */
export interface ChatLogRecord {
  readonly event: 'request' | 'response';
  readonly advisor: string;
  readonly conversationId: string;
  readonly data: Record<string, unknown>;
}

/** Options of {@link SimpleLoggerAdvisor}. */
export interface SimpleLoggerAdvisorOptions {
  /**
   * Receives each record, already redacted. It may be async; the call does not
   * wait for it, and what it throws or rejects with is ignored.
   * @default one JSON line per record on stderr
   */
  readonly log?: (record: ChatLogRecord) => void;
  /** @default AdvisorOrder.DEFAULT */
  readonly order?: number;
  /** Include message contents (redacted; images and files as their size); otherwise only counts. @default true */
  readonly includeContent?: boolean;
}

/** What each option of SimpleLoggerAdvisor accepts. */
const SIMPLE_LOGGER_ADVISOR_OPTION_RULES: OptionRules<SimpleLoggerAdvisorOptions> = {
  log: is.function(),
  order: is.number(-Number.MAX_VALUE),
  includeContent: is.boolean(),
};

/**
 * Logs each request and response as structured records. Secrets (API keys,
 * bearer tokens, passwords, keys in URLs) are redacted before the record
 * leaves the advisor. Images and files in messages are logged by their size,
 * not their bytes. Placed inside the tool loop it logs every round.
 */
export class SimpleLoggerAdvisor implements Advisor {
  readonly name = 'SimpleLoggerAdvisor';
  readonly order: number;
  readonly adviseCall: NonNullable<Advisor['adviseCall']>;
  readonly adviseStream: NonNullable<Advisor['adviseStream']>;

  constructor(options: SimpleLoggerAdvisorOptions = {}) {
    validateOptions('SimpleLoggerAdvisor', options, SIMPLE_LOGGER_ADVISOR_OPTION_RULES);
    this.order = options.order ?? AdvisorOrder.DEFAULT;
    const log = options.log ?? ((record: ChatLogRecord) => process.stderr.write(`${JSON.stringify(record)}\n`));
    const includeContent = options.includeContent ?? true;
    const emit = (record: ChatLogRecord): void => {
      // A broken log sink must not break the call, nor an async one that rejects end the process.
      try {
        // The conversation id is the caller's (a header, a user name): a secret in it is masked too.
        const returned: unknown = log({ ...record, conversationId: redact(record.conversationId), data: redactValue(record.data) as Record<string, unknown> });
        if (isPromiseLike(returned)) returned.then(undefined, () => undefined);
      } catch {
        // As above.
      }
    };
    const inner = beforeAfterAdvisor({
      name: this.name,
      order: this.order,
      before: (request) => {
        emit({
          event: 'request',
          advisor: this.name,
          conversationId: conversationIdOf(request.context),
          data: {
            system: includeContent ? request.system : undefined,
            messages: includeContent ? loggedMessages(request.messages) : request.messages.length,
            tools: Object.keys(request.tools),
            options: request.options,
          },
        });
        return request;
      },
      after: (response) => {
        const r = response.response;
        emit({
          event: 'response',
          advisor: this.name,
          conversationId: conversationIdOf(response.context),
          data: {
            text: includeContent ? r.text : r.text.length,
            toolCalls: r.toolCalls.map((c) => ({ name: c.toolName, input: includeContent ? c.input : undefined })),
            finishReason: r.finishReason,
            usage: r.usage,
            totalTokens: totalTokens(r.totalUsage),
            modelId: r.modelId,
          },
        });
        return response;
      },
    });
    this.adviseCall = inner.adviseCall!;
    this.adviseStream = inner.adviseStream!;
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
