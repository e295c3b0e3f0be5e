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
  type WireToolCall,
  type WireToolResult,
} from './wire-api.ts';

/** The OpenAI Chat Completions format (`POST /v1/chat/completions`). */
export const openaiWire: WireApi = {
  name: 'openai',

  ...MESSAGES_REQUESTS,

  userHint(body) {
    return typeof body['user'] === 'string' && body['user'] !== '' ? body['user'] : undefined;
  },

  promptSeed(body) {
    const messages = asArray(body['messages']).filter(isObject);
    // Only the opening instructions: a client may add system messages later on (reminders, notes), and every
    // request of the conversation must still name the same session.
    const opening = messages.findIndex((m) => m['role'] !== 'system' && m['role'] !== 'developer');
    const system = messages.slice(0, opening === -1 ? messages.length : opening).map((m) => contentText(m['content']));
    const firstUser = messages.find((m) => m['role'] === 'user');
    return JSON.stringify([system, firstUser === undefined ? '' : contentText(firstUser['content'])]);
  },

  isStream(body) {
    return body['stream'] === true;
  },

  requestTail(body): RequestTail {
    const messages = asArray(body['messages']);
    const lastIndex = messages.length - 1;
    const last = messages[lastIndex];
    if (isObject(last) && last['role'] === 'user') return { toolResults: [], userText: contentText(last['content']), lastIndex };
    let assistantAt = -1;
    for (let i = lastIndex; i >= 0; i -= 1) {
      if (isObject(messages[i]) && (messages[i] as JsonObject)['role'] === 'assistant') {
        assistantAt = i;
        break;
      }
    }
    if (assistantAt < 0) return { toolResults: [], userText: null, lastIndex };
    const calls = new Map<string, { name: string; args: unknown }>();
    for (const call of asArray((messages[assistantAt] as JsonObject)['tool_calls'])) {
      if (!isObject(call) || !isObject(call['function'])) continue;
      calls.set(String(call['id']), { name: String(call['function']['name']), args: parseArgs(call['function']['arguments']) });
    }
    const toolResults: WireToolResult[] = [];
    for (const message of messages.slice(assistantAt + 1)) {
      if (!isObject(message) || message['role'] !== 'tool') continue;
      const id = String(message['tool_call_id']);
      const call = calls.get(id);
      if (call === undefined) continue;
      toolResults.push({ id, name: call.name, args: call.args, result: contentText(message['content']), error: false });
    }
    return { toolResults, userText: null, lastIndex };
  },

  withSteers(body, text) {
    const messages = asArray(body['messages']).slice();
    const last = messages.at(-1);
    // Like the library's own tool loop: the note rides on the tool result the model reads next.
    if (isObject(last) && last['role'] === 'tool' && typeof last['content'] === 'string') {
      messages[messages.length - 1] = { ...last, content: `${last['content']}\n\n${text}` };
    } else {
      messages.push({ role: 'system', content: text });
    }
    return { ...body, messages };
  },

  roundOf(response) {
    const choice = asArray(response['choices'])[0];
    const message = isObject(choice) && isObject(choice['message']) ? choice['message'] : {};
    const toolCalls: WireToolCall[] = asArray(message['tool_calls'])
      .filter(isObject)
      .map((call) => {
        const fn = isObject(call['function']) ? call['function'] : {};
        return { id: String(call['id']), name: String(fn['name']), args: parseArgs(fn['arguments']) };
      });
    return { text: contentText(message['content'] ?? ''), ...modelOf(response), ...usageOf(response['usage']), toolCalls };
  },

  withUsageRequested(body) {
    if (!this.isStream(body) || usageAsked(body)) return body;
    const options = isObject(body['stream_options']) ? body['stream_options'] : {};
    return { ...body, stream_options: { ...options, include_usage: true } };
  },

  withBlocks(response, blocked) {
    const choices = asArray(response['choices']).map((choice, index) => {
      if (index !== 0 || !isObject(choice) || !isObject(choice['message'])) return choice;
      const message = choice['message'];
      const calls = asArray(message['tool_calls']).filter(isObject);
      const names = new Map(calls.map((c) => [String(c['id']), String(isObject(c['function']) ? c['function']['name'] : '')]));
      const kept = calls.filter((c) => !blocked.has(String(c['id'])));
      const previous = typeof message['content'] === 'string' && message['content'] !== '' ? `${message['content']}\n\n` : '';
      const { tool_calls: _dropped, ...rest } = message;
      return {
        ...choice,
        message: { ...rest, content: previous + blockText(blocked, names), ...(kept.length > 0 ? { tool_calls: kept } : {}) },
        finish_reason: kept.length > 0 ? choice['finish_reason'] : 'stop',
      };
    });
    return { ...response, choices };
  },

  stopResponse(request, text, upstream) {
    return {
      id: typeof upstream?.['id'] === 'string' ? upstream['id'] : `chatcmpl-governor-${Date.now()}`,
      object: 'chat.completion',
      created: typeof upstream?.['created'] === 'number' ? upstream['created'] : Math.floor(Date.now() / 1000),
      model: typeof upstream?.['model'] === 'string' ? upstream['model'] : String(request['model'] ?? 'unknown'),
      // `refusal: null` as the API writes every assistant message: the SDK's type has it as `string | null`, never absent.
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: isObject(upstream?.['usage']) ? upstream['usage'] : { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
  },

  stopEvents(request, text) {
    const base = {
      id: `chatcmpl-governor-${Date.now()}`,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: String(request['model'] ?? 'unknown'),
    };
    return [
      data({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: text }, logprobs: null, finish_reason: null }] }),
      data({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] }),
      ...(usageAsked(request) ? [data({ ...base, choices: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } })] : []),
      { data: '[DONE]' },
    ];
  },

  refusal(message) {
    return { error: { message, type: 'governor_breaker_open', param: null, code: 'breaker_open' } };
  },

  tooLarge(message) {
    return { error: { message, type: 'invalid_request_error', param: null, code: 'request_too_large' } };
  },

  invalidBody(message) {
    return { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_body_encoding' } };
  },

  unavailable(message) {
    return { error: { message, type: 'server_error', param: null, code: 'store_unavailable' } };
  },

  streamError(message) {
    return data({ error: { message, type: 'upstream_error', param: null, code: 'upstream_unreachable' } });
  },

  streamRewriter(request) {
    return new OpenAiStreamRewriter(usageAsked(request));
  },
};

/** Whether a streamed request asked for the usage chunk itself. */
function usageAsked(request: JsonObject): boolean {
  return isObject(request['stream_options']) && request['stream_options']['include_usage'] === true;
}

function usageOf(usage: unknown): { promptTokens: number | null; completionTokens: number | null } {
  if (!isObject(usage)) return { promptTokens: null, completionTokens: null };
  return { promptTokens: tokenCount(usage['prompt_tokens']), completionTokens: tokenCount(usage['completion_tokens']) };
}

function data(value: unknown): SseEvent {
  return { data: JSON.stringify(value) };
}

/** Whether an event is one that follows the finish chunk: the usage chunk (no choices) or `[DONE]`. */
function afterFinish(event: SseEvent): boolean {
  if (event.data === '[DONE]') return true;
  const chunk = parseJson(event.data);
  return isObject(chunk) && asArray(chunk['choices']).length === 0;
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

/** A tool-call delta's call: its `index`, 0 when a server leaves it out. */
function callIndex(toolDelta: JsonObject): number {
  return typeof toolDelta['index'] === 'number' ? toolDelta['index'] : 0;
}

/**
 * Text deltas pass through at once. From the first tool-call delta on,
 * chunks are held (tool calls are judged as a whole), and so are the finish
 * chunk, the usage chunk and `[DONE]` (the model round is judged on them).
 */
class OpenAiStreamRewriter implements StreamRewriter {
  #text = '';
  /** Whether text went out before the holding began: a stop's message is set apart from it. */
  #textSent = false;
  #usage: { promptTokens: number | null; completionTokens: number | null } = { promptTokens: null, completionTokens: null };
  /** Call index → the call streamed there. */
  readonly #calls = new Map<number, PendingCall>();
  readonly #held: SseEvent[] = [];
  #holding = false;
  #last: JsonObject | undefined;
  #model: { model?: string } = {};
  /** Whether the client asked for the usage chunk; the proxy asks for it anyway, and keeps it from a client that did not. */
  readonly #usageAsked: boolean;

  constructor(usageAsked: boolean) {
    this.#usageAsked = usageAsked;
  }

  accept(event: SseEvent): SseEvent[] {
    if (event.data === '[DONE]') {
      this.#holding = true;
      this.#held.push(event);
      return [];
    }
    const chunk = parseJson(event.data);
    if (!isObject(chunk)) return this.#pass(event);
    this.#last = chunk;
    this.#model = modelOf(chunk);
    if (isObject(chunk['usage'])) this.#usage = usageOf(chunk['usage']);
    const choice = asArray(chunk['choices'])[0];
    if (!isObject(choice)) {
      // The usage chunk (no choices) comes after the finish: hold it with the end.
      if (isObject(chunk['usage'])) {
        this.#holding = true;
        // A client that did not ask may not expect a chunk without choices.
        if (!this.#usageAsked) return [];
        this.#held.push(event);
        return [];
      }
      return this.#pass(event);
    }
    const delta = isObject(choice['delta']) ? choice['delta'] : {};
    for (const toolDelta of asArray(delta['tool_calls']).filter(isObject)) {
      this.#holding = true;
      const fn = isObject(toolDelta['function']) ? toolDelta['function'] : {};
      const index = callIndex(toolDelta);
      let call = this.#calls.get(index);
      if (call === undefined) {
        call = { id: '', name: '', args: '' };
        this.#calls.set(index, call);
      }
      if (typeof toolDelta['id'] === 'string') call.id = toolDelta['id'];
      if (typeof fn['name'] === 'string') call.name += fn['name'];
      if (typeof fn['arguments'] === 'string') call.args += fn['arguments'];
    }
    if (choice['finish_reason'] != null) this.#holding = true;
    if (typeof delta['content'] === 'string') {
      this.#text += delta['content'];
      if (!this.#holding && delta['content'] !== '') this.#textSent = true;
    }
    return this.#pass(event);
  }

  #pass(event: SseEvent): SseEvent[] {
    if (this.#holding) {
      this.#held.push(event);
      return [];
    }
    return [event];
  }

  round(): WireRound {
    const toolCalls = [...this.#calls.values()].map((c) => ({ id: c.id, name: c.name, args: parseArgs(c.args) }));
    return { text: this.#text, ...this.#model, ...this.#usage, toolCalls };
  }

  finish(verdict: RoundVerdict): SseEvent[] {
    if (verdict.stop !== undefined) return this.#stopped(verdict.stop.text);
    if (verdict.blocked.size === 0) return [...this.#held];
    // Kept calls are renumbered from 0: clients collect tool calls in an array by index.
    const kept = [...this.#calls].filter(([, c]) => !verdict.blocked.has(c.id)).map(([index]) => index);
    const names = new Map([...this.#calls.values()].map((c) => [c.id, c.name]));
    const explanation = `${this.#text === '' ? '' : '\n\n'}${blockText(verdict.blocked, names)}`;
    const out: SseEvent[] = [];
    let explained = false;
    for (const held of this.#held) {
      const chunk = parseJson(held.data);
      const choice = isObject(chunk) ? asArray(chunk['choices'])[0] : undefined;
      if (!isObject(chunk) || !isObject(choice)) {
        out.push(held);
        continue;
      }
      const { tool_calls: calls, ...rest } = isObject(choice['delta']) ? choice['delta'] : {};
      const keptCalls = asArray(calls)
        .filter(isObject)
        .flatMap((call) => {
          const position = kept.indexOf(callIndex(call));
          return position < 0 ? [] : [{ ...call, index: position }];
        });
      // A blocked call's delta goes; what came with it (the role, text) stays: a client needs the role of the message.
      const delta = keptCalls.length > 0 ? { ...rest, tool_calls: keptCalls } : rest;
      const finish = choice['finish_reason'];
      if (finish == null) {
        if (calls === undefined) out.push(held);
        else if (Object.keys(delta).length > 0) out.push(data({ ...chunk, choices: [{ ...choice, delta }] }));
        continue;
      }
      // Some servers finish on the chunk of the last call: what it brings, the explanation, then the finish.
      if (Object.keys(delta).length > 0) out.push(data({ ...chunk, choices: [{ ...choice, delta, finish_reason: null }] }));
      if (!explained) {
        out.push(data({ ...chunk, choices: [{ ...choice, delta: { content: explanation }, finish_reason: null }] }));
        explained = true;
      }
      out.push(data({ ...chunk, choices: [{ ...choice, delta: {}, finish_reason: kept.length > 0 ? finish : 'stop' }] }));
    }
    if (!explained) {
      // An answer that ended without a finish still gets the explanation, before its usage and `[DONE]`; no finish is made up for it.
      const end = out.findIndex(afterFinish);
      out.splice(
        end < 0 ? out.length : end,
        0,
        data({ ...this.#shell(), choices: [{ index: 0, delta: { content: explanation }, logprobs: null, finish_reason: null }] }),
      );
    }
    return out;
  }

  /** The fields every chunk of this answer repeats, for a chunk the proxy writes into it. */
  #shell(): JsonObject {
    const base = this.#last ?? {};
    return { id: base['id'], object: 'chat.completion.chunk', created: base['created'], model: base['model'] };
  }

  #stopped(text: string): SseEvent[] {
    const shell = this.#shell();
    // The held chunks go, and with them the role when it came with the first call: the message names it then.
    const role = this.#heldRole();
    const delta = { ...(role === undefined ? {} : { role }), content: `${this.#textSent ? '\n\n' : ''}${text}` };
    const out: SseEvent[] = [
      data({ ...shell, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] }),
      data({ ...shell, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] }),
    ];
    out.push(...this.#held.filter(afterFinish));
    return out;
  }

  /** The role a held chunk names, if one does. */
  #heldRole(): string | undefined {
    for (const held of this.#held) {
      const chunk = parseJson(held.data);
      const choice = isObject(chunk) ? asArray(chunk['choices'])[0] : undefined;
      const delta = isObject(choice) && isObject(choice['delta']) ? choice['delta'] : {};
      if (typeof delta['role'] === 'string') return delta['role'];
    }
    return undefined;
  }
}
