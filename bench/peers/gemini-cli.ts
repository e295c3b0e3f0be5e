/**
 * Gemini CLI's loop detection (packages/core/src/services/loopDetectionService.ts),
 * re-implemented from its published rules:
 *  - tool calls: sha256 of `name:JSON.stringify(args)`; the same key 5 times
 *    in a row (TOOL_CALL_LOOP_THRESHOLD) is a loop, detected when the call is
 *    requested, i.e. before it runs;
 *  - content "chanting": the model's text is hashed in 50-character chunks;
 *    the same chunk 10 times (CONTENT_LOOP_THRESHOLD) with an average distance
 *    of at most 250 characters and at most 5 distinct periods is a loop.
 *    Tracking resets on code fences, tables, list items, headings, block
 *    quotes and dividers, and on every tool call;
 *  - everything resets when a new user prompt starts.
 * Not reproduced: the LLM judge it consults after 30 turns in one prompt (it
 * needs a model); a recorded run cannot be re-asked.
 */
import { createHash } from 'node:crypto';
import type { BreakerEvent, ProposedToolCall } from '../../src/breaker/breaker-event.ts';
import type { ReplayableBreaker, ReplayDecision } from '../../src/replay/replayable-breaker.ts';
import { ALLOW, stop } from './peer-detector.ts';

const TOOL_CALL_LOOP_THRESHOLD = 5;
const CONTENT_LOOP_THRESHOLD = 10;
const CONTENT_CHUNK_SIZE = 50;
const MAX_HISTORY_LENGTH = 5000;

/** Markdown structure that makes Gemini CLI start its repetition count afresh. */
function hasStructure(text: string): boolean {
  return (
    /```/.test(text) ||
    /(^|\n)\s*(\|.*\||[|+-]{3,})/.test(text) ||
    /(^|\n)\s*[*-+]\s/.test(text) ||
    /(^|\n)\s*\d+\.\s/.test(text) ||
    /(^|\n)#+\s/.test(text) ||
    /(^|\n)>\s/.test(text) ||
    isDivider(text)
  );
}

function isDivider(text: string): boolean {
  return /^[+-_=*\u2500-\u257F]+$/.test(text);
}

/**
 * Repeated fixed-size chunks in a bounded text window. Chunks are keyed by
 * their text (the original hashes them and then compares the text, which
 * comes to the same).
 */
class ChunkRepetition {
  #text = '';
  #next = 0;
  #positions = new Map<string, number[]>();

  clear(): void {
    this.#text = '';
    this.#next = 0;
    this.#positions.clear();
  }

  /** Appends text; true when some chunk now repeats like a loop. */
  append(text: string): boolean {
    this.#text += text;
    this.#dropOverflow();
    for (; this.#next + CONTENT_CHUNK_SIZE <= this.#text.length; this.#next++) {
      const chunk = this.#text.slice(this.#next, this.#next + CONTENT_CHUNK_SIZE);
      const seen = this.#positions.get(chunk);
      if (seen === undefined) {
        this.#positions.set(chunk, [this.#next]);
        continue;
      }
      seen.push(this.#next);
      if (seen.length >= CONTENT_LOOP_THRESHOLD && this.#looksLikeLoop(seen.slice(-CONTENT_LOOP_THRESHOLD))) return true;
    }
    return false;
  }

  /** Close together, and the stretches between repeats mostly the same text. */
  #looksLikeLoop(recent: number[]): boolean {
    const first = recent[0] ?? 0;
    const last = recent[recent.length - 1] ?? 0;
    if ((last - first) / (recent.length - 1) > CONTENT_CHUNK_SIZE * 5) return false;
    const periods = new Set<string>();
    for (let i = 1; i < recent.length; i++) periods.add(this.#text.slice(recent[i - 1], recent[i]));
    return periods.size <= Math.floor(CONTENT_LOOP_THRESHOLD / 2);
  }

  #dropOverflow(): void {
    const excess = this.#text.length - MAX_HISTORY_LENGTH;
    if (excess <= 0) return;
    this.#text = this.#text.slice(excess);
    this.#next = Math.max(0, this.#next - excess);
    for (const [chunk, positions] of this.#positions) {
      const kept = positions.map((p) => p - excess).filter((p) => p >= 0);
      if (kept.length === 0) this.#positions.delete(chunk);
      else this.#positions.set(chunk, kept);
    }
  }
}

/** One instance per session. */
export class GeminiCliLoopDetection implements ReplayableBreaker {
  #lastCallKey: string | undefined;
  #sameCallCount = 0;
  readonly #chunks = new ChunkRepetition();
  #insideFence = false;

  async checkModelCall(): Promise<ReplayDecision> {
    return ALLOW;
  }

  async checkToolCall(_sessionId: string, call: ProposedToolCall): Promise<ReplayDecision> {
    // Text repetition is judged within one response stream; a tool call ends it.
    this.#chunks.clear();
    const key = createHash('sha256')
      .update(`${call.tool}:${JSON.stringify(call.args)}`)
      .digest('hex');
    this.#sameCallCount = key === this.#lastCallKey ? this.#sameCallCount + 1 : 1;
    this.#lastCallKey = key;
    if (this.#sameCallCount >= TOOL_CALL_LOOP_THRESHOLD) {
      return stop('tool_spiral', `${call.tool} requested ${TOOL_CALL_LOOP_THRESHOLD} times in a row with the same arguments`);
    }
    return ALLOW;
  }

  async observe(_sessionId: string, event: BreakerEvent): Promise<ReplayDecision> {
    if (event.kind === 'user') {
      // A new prompt starts a new detection run.
      this.#lastCallKey = undefined;
      this.#sameCallCount = 0;
      this.#chunks.clear();
      return ALLOW;
    }
    if (event.kind === 'model' && event.text !== '' && this.#textLoops(event.text)) {
      return stop('other', 'the model output repeats itself');
    }
    return ALLOW;
  }

  #textLoops(text: string): boolean {
    if (hasStructure(text)) this.#chunks.clear();
    const fences = (text.match(/```/g) ?? []).length;
    const wasInside = this.#insideFence;
    if (fences % 2 === 1) this.#insideFence = !this.#insideFence;
    // Code repeats itself legitimately; Gemini CLI ignores it.
    if (wasInside || this.#insideFence || isDivider(text)) return false;
    return this.#chunks.append(text);
  }
}
