import { anthropicBlockCalls, isAnthropicServerToolBlock } from '../breaker/hosted-calls.ts';
import {
  asArray,
  blockText,
  contentText,
  isObject,
  modelOf,
  parseArgs,
  parseJson,
  tokenCount,
  type JsonObject,
  type RequestTail,
  type RoundVerdict,
  type SseEvent,
  type StreamRewriter,
  MESSAGES_REQUESTS,
  type WireApi,
  type WireRound,
  type WireToolResult,
} from './wire-api.ts';

/** The Anthropic Messages format (`POST /v1/messages`). */
export const anthropicWire: WireApi = {
  name: 'anthropic',

  ...MESSAGES_REQUESTS,

  userHint(body) {
    const metadata = body['metadata'];
    return isObject(metadata) && typeof metadata['user_id'] === 'string' && metadata['user_id'] !== '' ? metadata['user_id'] : undefined;
  },

  promptSeed(body) {
    const firstUser = asArray(body['messages'])
      .filter(isObject)
      .find((m) => m['role'] === 'user');
    return JSON.stringify([contentText(body['system'] ?? ''), firstUser === undefined ? '' : contentText(firstUser['content'])]);
  },

  isStream(body) {
    return body['stream'] === true;
  },

  requestTail(body): RequestTail {
    const messages = asArray(body['messages']);
    const lastIndex = lastTurnIndex(messages);
    const last = messages[lastIndex];
    if (!isObject(last) || last['role'] !== 'user') return { toolResults: [], userText: null, lastIndex };
    const blocks = asArray(last['content']).filter(isObject);
    const results = blocks.filter((b) => b['type'] === 'tool_result');
    if (results.length === 0) return { toolResults: [], userText: contentText(last['content']), lastIndex };
    const previous = messages[lastIndex - 1];
    const calls = new Map<string, { name: string; args: unknown }>();
    if (isObject(previous) && previous['role'] === 'assistant') {
      for (const block of asArray(previous['content']).filter(isObject)) {
        if (block['type'] === 'tool_use') calls.set(String(block['id']), { name: String(block['name']), args: parseArgs(block['input']) });
      }
    }
    const toolResults: WireToolResult[] = [];
    for (const result of results) {
      const id = String(result['tool_use_id']);
      const call = calls.get(id);
      if (call === undefined) continue;
      toolResults.push({ id, name: call.name, args: call.args, result: contentText(result['content'] ?? ''), error: result['is_error'] === true });
    }
    return { toolResults, userText: null, lastIndex };
  },

  withSteers(body, text) {
    const messages = asArray(body['messages']).slice();
    const at = lastTurnIndex(messages);
    const last = messages[at];
    if (isObject(last) && last['role'] === 'user') {
      const content = typeof last['content'] === 'string' ? [{ type: 'text', text: last['content'] }] : asArray(last['content']);
      messages[at] = { ...last, content: [...content, { type: 'text', text }] };
    } else {
      messages.push({ role: 'user', content: [{ type: 'text', text }] });
    }
    return { ...body, messages };
  },

  roundOf(response) {
    const content = asArray(response['content']).filter(isObject);
    const text = content
      .filter((b) => b['type'] === 'text')
      .map((b) => String(b['text'] ?? ''))
      .join('');
    const toolCalls = content
      .filter((b) => b['type'] === 'tool_use')
      .map((b) => ({ id: String(b['id']), name: String(b['name']), args: parseArgs(b['input']) }));
    return { text, ...modelOf(response), ...usageOf(response['usage']), toolCalls, hosted: anthropicBlockCalls(content) };
  },

  withBlocks(response, blocked) {
    const content = asArray(response['content']).filter(isObject);
    const names = new Map(content.filter((b) => b['type'] === 'tool_use').map((b) => [String(b['id']), String(b['name'])]));
    const kept = content.filter((b) => !(b['type'] === 'tool_use' && blocked.has(String(b['id']))));
    const stillCalls = kept.some((b) => b['type'] === 'tool_use');
    // With no client call left to answer, a server call waiting on one's result never runs: it goes too.
    const answered = answeredIds(content);
    return {
      ...response,
      content: [...(stillCalls ? kept : kept.filter((b) => !waitsOnClient(b, answered))), { type: 'text', text: blockText(blocked, names) }],
      stop_reason: stillCalls ? response['stop_reason'] : 'end_turn',
    };
  },

  stopResponse(request, text, upstream) {
    return {
      id: typeof upstream?.['id'] === 'string' ? upstream['id'] : `msg_governor_${Date.now()}`,
      type: 'message',
      role: 'assistant',
      model: typeof upstream?.['model'] === 'string' ? upstream['model'] : String(request['model'] ?? 'unknown'),
      content: [...ranBeforeStop(asArray(upstream?.['content']).filter(isObject)), { type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: isObject(upstream?.['usage']) ? upstream['usage'] : { input_tokens: 0, output_tokens: 0 },
    };
  },

  stopEvents(request, text) {
    const message = anthropicWire.stopResponse(request, '', undefined);
    return [
      event('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null } }),
      ...textBlock(0, text),
      event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 0 } }),
      event('message_stop', { type: 'message_stop' }),
    ];
  },

  refusal(message) {
    return { type: 'error', error: { type: 'permission_error', message } };
  },

  tooLarge(message) {
    return { type: 'error', error: { type: 'request_too_large', message } };
  },

  invalidBody(message) {
    return { type: 'error', error: { type: 'invalid_request_error', message } };
  },

  unavailable(message) {
    return { type: 'error', error: { type: 'api_error', message } };
  },

  streamError(message) {
    return event('error', { type: 'error', error: { type: 'api_error', message } });
  },

  streamRewriter() {
    return new AnthropicStreamRewriter();
  },
};

function usageOf(usage: unknown): { promptTokens: number | null; completionTokens: number | null } {
  if (!isObject(usage)) return { promptTokens: null, completionTokens: null };
  const input = tokenCount(usage['input_tokens']);
  // Cached input counts as prompt too: it is what the model read.
  const cached = (tokenCount(usage['cache_read_input_tokens']) ?? 0) + (tokenCount(usage['cache_creation_input_tokens']) ?? 0);
  return { promptTokens: input === null ? null : input + cached, completionTokens: tokenCount(usage['output_tokens']) };
}

function event(name: string, value: unknown): SseEvent {
  return { event: name, data: JSON.stringify(value) };
}

function textBlock(index: number, text: string): SseEvent[] {
  return [
    event('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
    event('content_block_stop', { type: 'content_block_stop', index }),
  ];
}

interface HeldEvent {
  readonly event: SseEvent;
  /** Content block index the event belongs to, when it belongs to one. */
  readonly block: number | undefined;
}

/**
 * Text blocks pass through at once. From the first `tool_use` block on,
 * events are held until the message ends, and so are `message_delta` and
 * `message_stop` (the round is judged on them). A server tool call before
 * that is held until its result starts: until then it may be one waiting on
 * a client call to come, which a verdict on that call may remove (see
 * {@link waitsOnClient}).
 */
class AnthropicStreamRewriter implements StreamRewriter {
  #text = '';
  #promptTokens: number | null = null;
  #completionTokens: number | null = null;
  readonly #tools = new Map<number, { id: string; name: string; json: string; input: unknown }>();
  /** Block index → a block of a call the upstream ran itself (kept even by a stop: it has run), its input streamed as for a tool. */
  readonly #hosted = new Map<number, { block: JsonObject; json: string }>();
  /** The ids of the server tool calls whose result block came: those that ran (see {@link waitsOnClient}). */
  readonly #answered = new Set<string>();
  /** The ids of the server tool calls without their result yet: while there is one, events are held. */
  readonly #unanswered = new Set<string>();
  readonly #held: HeldEvent[] = [];
  #holding = false;
  /** Blocks sent on before holding began: the next block sent is numbered this. */
  #sent = 0;
  #model: { model?: string } = {};

  accept(sse: SseEvent): SseEvent[] {
    const value = parseJson(sse.data);
    if (!isObject(value)) return this.#pass(sse, undefined);
    const block = typeof value['index'] === 'number' ? value['index'] : undefined;
    switch (value['type']) {
      case 'message_start': {
        this.#model = modelOf(value['message']);
        const usage = usageOf(isObject(value['message']) ? value['message']['usage'] : undefined);
        this.#promptTokens = usage.promptTokens;
        this.#completionTokens = usage.completionTokens;
        break;
      }
      case 'content_block_start': {
        const content = isObject(value['content_block']) ? value['content_block'] : {};
        if (typeof content['tool_use_id'] === 'string') {
          this.#answered.add(content['tool_use_id']);
          this.#unanswered.delete(content['tool_use_id']);
        }
        if (content['type'] === 'tool_use' && block !== undefined) {
          this.#holding = true;
          this.#tools.set(block, { id: String(content['id']), name: String(content['name']), json: '', input: content['input'] });
        } else if (isAnthropicServerToolBlock(content['type']) && block !== undefined) {
          this.#hosted.set(block, { block: content, json: '' });
          if (waitsOnClient(content, this.#answered)) this.#unanswered.add(String(content['id']));
        }
        break;
      }
      case 'content_block_delta': {
        const delta = isObject(value['delta']) ? value['delta'] : {};
        if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') this.#text += delta['text'];
        const tool = block === undefined ? undefined : this.#tools.get(block);
        const input = tool ?? (block === undefined ? undefined : this.#hosted.get(block));
        if (input !== undefined && delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') input.json += delta['partial_json'];
        break;
      }
      case 'message_delta': {
        const usage = usageOf(value['usage']);
        if (usage.completionTokens !== null) this.#completionTokens = usage.completionTokens;
        if (usage.promptTokens !== null) this.#promptTokens = usage.promptTokens;
        this.#holding = true;
        break;
      }
      case 'message_stop':
        this.#holding = true;
        break;
    }
    return this.#pass(sse, block);
  }

  #pass(sse: SseEvent, block: number | undefined): SseEvent[] {
    this.#held.push({ event: sse, block });
    if (this.#holding || this.#unanswered.size > 0) return [];
    // The server calls held have their results (they ran): they go on with what came after them.
    const out = this.#held.splice(0);
    for (const held of out) {
      if (held.block !== undefined && held.block >= this.#sent) this.#sent = held.block + 1;
    }
    return out.map((held) => held.event);
  }

  round(): WireRound {
    const toolCalls = [...this.#tools.values()].map((t) => ({ id: t.id, name: t.name, args: t.json === '' ? parseArgs(t.input) : parseArgs(t.json) }));
    const hosted = [...this.#hosted].sort(([a], [b]) => a - b).map(([, { block, json }]) => (json === '' ? block : { ...block, input: parseJson(json) }));
    return {
      text: this.#text,
      ...this.#model,
      promptTokens: this.#promptTokens,
      completionTokens: this.#completionTokens,
      toolCalls,
      hosted: anthropicBlockCalls(hosted),
    };
  }

  finish(verdict: RoundVerdict): SseEvent[] {
    if (verdict.stop === undefined && verdict.blocked.size === 0) return this.#held.map((h) => h.event);
    const stop = verdict.stop !== undefined;
    const removed = new Set<number>();
    for (const [index, tool] of this.#tools) {
      if (stop || verdict.blocked.has(tool.id)) removed.add(index);
    }
    const names = new Map([...this.#tools.values()].map((t) => [t.id, t.name]));
    const keptCalls = this.#tools.size - removed.size;
    const replacement = verdict.stop?.text ?? blockText(verdict.blocked, names);
    // The blocks that stay are numbered on from those sent, in order: a client (Anthropic's SDK) finds a block by its index as its place in the message.
    let next = this.#sent;
    const renumbered = new Map<number, number>();
    const out: SseEvent[] = [];
    let explained = false;
    const explain = (): void => {
      if (explained) return;
      out.push(...textBlock(next++, replacement));
      explained = true;
    };
    let delta = false;
    let ended = false;
    // The explanation is in the message; a stop, the proxy's own answer, ends as the API ends one, whatever the upstream left out.
    const end = (): void => {
      explain();
      if (!stop || delta) return;
      const usage = { output_tokens: this.#completionTokens ?? 0 };
      out.push(event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage }));
      delta = true;
    };
    for (const held of this.#held) {
      const { block } = held;
      const value = parseJson(held.event.data);
      if (!isObject(value)) {
        out.push(held.event);
        continue;
      }
      if (block !== undefined && value['type'] === 'content_block_start') {
        const content = value['content_block'];
        // Without a client call left, as a block not streamed (see withBlocks).
        if (stop ? !keptByStop(content, this.#answered) : keptCalls === 0 && waitsOnClient(content, this.#answered)) removed.add(block);
      }
      if (block !== undefined && removed.has(block)) {
        // The note on blocked calls stands where the first of them stood; a stop's message ends the answer, after what ran.
        if (!stop) explain();
        continue;
      }
      if (value['type'] === 'message_delta') {
        explain();
        delta = true;
        const fields = isObject(value['delta']) ? value['delta'] : {};
        out.push(
          event('message_delta', {
            ...value,
            delta: { ...fields, stop_reason: keptCalls > 0 && !stop ? fields['stop_reason'] : 'end_turn' },
          }),
        );
        continue;
      }
      if (value['type'] === 'message_stop') {
        end();
        ended = true;
      }
      if (block === undefined || block < this.#sent) {
        out.push(held.event);
        continue;
      }
      let index = renumbered.get(block);
      if (index === undefined) {
        index = next++;
        renumbered.set(block, index);
      }
      out.push(index === block ? held.event : { ...held.event, data: JSON.stringify({ ...value, index }) });
    }
    // An answer that broke off its end still gets the message; no end is added to a block's (its client reads it as cut short, as without the proxy).
    end();
    if (stop && !ended) out.push(event('message_stop', { type: 'message_stop' }));
    return out;
  }
}

/** The blocks of a server tool's call, which its result block names by `tool_use_id`. */
const SERVER_CALL_TYPES: ReadonlySet<unknown> = new Set(['server_tool_use', 'mcp_tool_use']);

/** The ids of the server tool calls whose result is among the blocks: those that ran. */
function answeredIds(content: readonly JsonObject[]): Set<string> {
  return new Set(content.flatMap((block) => (typeof block['tool_use_id'] === 'string' ? [block['tool_use_id']] : [])));
}

/**
 * Whether a block is a server tool call without its result (`answered` names
 * the calls whose result came). In a turn that also calls a client tool, the
 * API runs such a call only once the client sends that tool's result back: an
 * answer left without a client call (a stop, a block of every call) never
 * gets it, and a client would send the call back as if it were still to run
 * (the AI SDK asks the model again to get its result).
 */
function waitsOnClient(block: unknown, answered: ReadonlySet<string>): boolean {
  return isObject(block) && SERVER_CALL_TYPES.has(block['type']) && !answered.has(String(block['id']));
}

/** What of an answer a stop keeps, as a streamed stop does (see {@link keptByStop}). */
function ranBeforeStop(content: readonly JsonObject[]): JsonObject[] {
  const answered = answeredIds(content);
  return content.filter((block) => keptByStop(block, answered));
}

/**
 * Whether a stop keeps a block of the answer it stops, streamed or not: the
 * server tool calls the API has run (searches, fetches, code, MCP) with their
 * results and the thinking among them do. Not the model's text, which the
 * stop message stands in for, nor the client's tool calls, nor a server tool
 * call still waiting on one of them (see {@link waitsOnClient}).
 */
function keptByStop(block: unknown, answered: ReadonlySet<string>): block is JsonObject {
  return isObject(block) && block['type'] !== 'text' && block['type'] !== 'tool_use' && !waitsOnClient(block, answered);
}

/**
 * The index of the request's last turn: its last message that is not a
 * `system` one. Claude Code may end a request with system messages after the
 * tool results ("The user hasn't heard from you in a while…"), which would
 * hide those results from the breaker, and put a steer after them.
 */
function lastTurnIndex(messages: readonly unknown[]): number {
  let at = messages.length - 1;
  while (at > 0 && isObject(messages[at]) && (messages[at] as JsonObject)['role'] === 'system') at--;
  return at;
}
