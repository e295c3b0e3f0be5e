import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import { ZERO_USAGE } from '../model/usage.ts';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Options of {@link SafeGuardAdvisor}. */
export interface SafeGuardAdvisorOptions {
  /**
   * Words or phrases that block a request: matched case-insensitively, as
   * whole words, with any run of whitespace between a phrase's words, and
   * after folding look-alike forms (full-width letters, ligatures) and
   * removing invisible characters (zero-width spaces, soft hyphens).
   */
  readonly sensitiveWords: readonly string[];
  /** The answer given instead of calling the model. @default "I'm unable to respond to that due to sensitive content. Could we rephrase or discuss something else?" */
  readonly failureResponse?: string;
  /** @default AdvisorOrder.HIGHEST_PRECEDENCE (before anything else runs) */
  readonly order?: number;
}

function escapeRegExp(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;
const HAS_INVISIBLE = /\p{Default_Ignorable_Code_Point}/u;

/**
 * Text as it reads: compatibility forms folded (full-width letters,
 * ligatures, non-breaking spaces) and invisible characters (zero-width
 * spaces and joiners, soft hyphens) read both ways, as nothing (`pass\u200Bword`
 * is "password") and as a space between words (`a\u200Bbomb` is "a bomb"),
 * so that neither can slip a word past the guard.
 */
function readings(text: string): string[] {
  const folded = text.normalize('NFKC');
  if (!HAS_INVISIBLE.test(folded)) return [folded];
  return [folded.replace(INVISIBLE, ''), folded.replace(INVISIBLE, ' ')];
}

/** A word's pattern: its words separated by any run of whitespace. */
function wordPattern(word: string): string {
  return word.split(/\s+/).map(escapeRegExp).join('\\s+');
}

function textsOf(request: ChatClientRequest): string[] {
  const texts: string[] = [];
  if (request.system) texts.push(request.system);
  for (const message of request.messages) {
    if (typeof message.content === 'string') texts.push(message.content);
    else for (const part of message.content) if (part.type === 'text') texts.push(part.text);
  }
  return texts;
}

/** What each option of SafeGuardAdvisor accepts. */
const SAFE_GUARD_ADVISOR_OPTION_RULES: OptionRules<SafeGuardAdvisorOptions> = {
  sensitiveWords: is.arrayOf(is.string()),
  failureResponse: is.string(),
  order: is.number(-Number.MAX_VALUE),
};

/**
 * Refuses requests containing configured sensitive words: the model is not
 * called and the configured answer is returned instead.
 */
export class SafeGuardAdvisor implements Advisor {
  readonly name = 'SafeGuardAdvisor';
  readonly order: number;
  readonly failureResponse: string;
  readonly #pattern: RegExp | undefined;

  constructor(options: SafeGuardAdvisorOptions) {
    validateOptions('SafeGuardAdvisor', options, SAFE_GUARD_ADVISOR_OPTION_RULES, { required: ['sensitiveWords'] });
    const words = options.sensitiveWords.map((w) => (readings(w)[0] ?? '').trim()).filter((w) => w.length > 0);
    this.#pattern = words.length > 0 ? new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map(wordPattern).join('|')})(?![\\p{L}\\p{N}])`, 'iu') : undefined;
    this.failureResponse = options.failureResponse ?? "I'm unable to respond to that due to sensitive content. Could we rephrase or discuss something else?";
    this.order = options.order ?? AdvisorOrder.HIGHEST_PRECEDENCE;
  }

  /** Whether a request would be blocked. */
  blocks(request: ChatClientRequest): boolean {
    const pattern = this.#pattern;
    return pattern !== undefined && textsOf(request).some((t) => readings(t).some((reading) => pattern.test(reading)));
  }

  async adviseCall(request: ChatClientRequest, chain: AdvisorChain): Promise<ChatClientResponse> {
    return this.blocks(request) ? this.#refusal(request) : chain.nextCall(request);
  }

  async *adviseStream(request: ChatClientRequest, chain: AdvisorChain): AsyncIterable<ChatStreamEvent> {
    if (!this.blocks(request)) {
      yield* chain.nextStream(request);
      return;
    }
    yield { type: 'text-delta', text: this.failureResponse };
    yield { type: 'finish', response: this.#refusal(request) };
  }

  #refusal(request: ChatClientRequest): ChatClientResponse {
    return {
      context: request.context,
      response: {
        text: this.failureResponse,
        content: [{ type: 'text', text: this.failureResponse }],
        toolCalls: [],
        finishReason: 'content-filter',
        usage: ZERO_USAGE,
        totalUsage: ZERO_USAGE,
        rounds: 0,
        messages: [{ role: 'assistant', content: this.failureResponse }],
        modelId: 'safeguard',
        warnings: [],
      },
    };
  }
}
