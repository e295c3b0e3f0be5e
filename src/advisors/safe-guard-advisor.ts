import { AdvisorOrder, type Advisor, type AdvisorChain } from '../chat/advisor.ts';
import type { ChatClientRequest } from '../chat/chat-client-request.ts';
import type { ChatClientResponse, ChatStreamEvent } from '../chat/chat-response.ts';
import type { ToolResultOutput } from '@ai-sdk/provider-utils';
import { jsonInstruction } from '../chat/entity.ts';
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
/** Invisible characters (zero-width spaces and joiners, soft hyphens) inside a word: read as nothing. */
const IN_WORD = '\\p{Default_Ignorable_Code_Point}*';
/** Between a phrase's words: any run of whitespace and invisible characters, which read as a space there. */
const BETWEEN_WORDS = '[\\s\\p{Default_Ignorable_Code_Point}]+';

/**
 * A word's pattern, matched against text with compatibility forms folded
 * (full-width letters, ligatures, non-breaking spaces). For text that holds
 * invisible characters, they may stand anywhere in it, as nothing inside a
 * word (`pass\u200Bword` is "password") and as a space between its words
 * (`a\u200Bbomb` is "a bomb"), in any mix (`a\u200Bbo\u200Bmb`), so that
 * none can slip a word past the guard.
 */
function wordPattern(word: string, invisible: boolean): string {
  return word
    .split(/\s+/)
    .map((part) => [...part].map(escapeRegExp).join(invisible ? IN_WORD : ''))
    .join(invisible ? BETWEEN_WORDS : '\\s+');
}

/** The guard's pattern: `invisible` for text that holds invisible characters (the plain one is cheaper, and most text holds none). */
function guardPattern(words: readonly string[], invisible: boolean): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${words.map((w) => wordPattern(w, invisible)).join('|')})(?![\\p{L}\\p{N}])`, 'iu');
}

/** The system prompt as the caller wrote it: without the JSON instruction `entity(schema)` or a validation advisor appended. */
function callerSystem(request: ChatClientRequest): string | undefined {
  const { system, responseFormat } = request;
  if (system === undefined || responseFormat?.type !== 'json' || responseFormat.schema === undefined) return system;
  const instruction = jsonInstruction(responseFormat.schema);
  return system.endsWith(instruction) ? system.slice(0, -instruction.length) : system;
}

/** The texts of a request the caller may have written: its system prompt, message texts, tool results, reasons for an approval's answer. */
function textsOf(request: ChatClientRequest): string[] {
  const texts: string[] = [];
  const system = callerSystem(request);
  if (system) texts.push(system);
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      // A client-side tool's output and a denial's reason come from the caller (a browser's addToolOutput) too.
      else if (part.type === 'tool-result') outputTexts(part.output, texts);
      else if (part.type === 'tool-approval-response' && part.reason !== undefined) texts.push(part.reason);
    }
  }
  return texts;
}

/** How deep the strings of a JSON tool output are looked for: deeper than results nest in practice. */
const MAX_OUTPUT_DEPTH = 16;

function outputTexts(output: ToolResultOutput, texts: string[]): void {
  switch (output.type) {
    case 'text':
    case 'error-text':
      texts.push(output.value);
      break;
    case 'json':
    case 'error-json':
      stringsOf(output.value, texts, 0);
      break;
    case 'execution-denied':
      if (output.reason !== undefined) texts.push(output.reason);
      break;
    case 'content':
      for (const item of output.value) if (item.type === 'text') texts.push(item.text);
      break;
  }
}

function stringsOf(value: unknown, texts: string[], depth: number): void {
  if (typeof value === 'string') texts.push(value);
  else if (value !== null && typeof value === 'object' && depth < MAX_OUTPUT_DEPTH) {
    for (const item of Object.values(value)) stringsOf(item, texts, depth + 1);
  }
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
  readonly #patterns: { readonly plain: RegExp; readonly invisible: RegExp } | undefined;

  constructor(options: SafeGuardAdvisorOptions) {
    validateOptions('SafeGuardAdvisor', options, SAFE_GUARD_ADVISOR_OPTION_RULES, { required: ['sensitiveWords'] });
    const words = options.sensitiveWords.map((w) => w.normalize('NFKC').replace(INVISIBLE, '').trim()).filter((w) => w.length > 0);
    this.#patterns = words.length > 0 ? { plain: guardPattern(words, false), invisible: guardPattern(words, true) } : undefined;
    this.failureResponse = options.failureResponse ?? "I'm unable to respond to that due to sensitive content. Could we rephrase or discuss something else?";
    this.order = options.order ?? AdvisorOrder.HIGHEST_PRECEDENCE;
  }

  /** Whether a request would be blocked. */
  blocks(request: ChatClientRequest): boolean {
    const patterns = this.#patterns;
    if (patterns === undefined) return false;
    return textsOf(request).some((text) => {
      const folded = text.normalize('NFKC');
      return (HAS_INVISIBLE.test(folded) ? patterns.invisible : patterns.plain).test(folded);
    });
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
