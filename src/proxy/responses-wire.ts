import { readShellOutput } from '../breaker/shell-output.ts';
import { randomUUID } from 'node:crypto';
import { responsesItemCall, responsesItemCalls, responsesShellCall, type HostedEvent } from '../breaker/hosted-calls.ts';
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
  type WireApi,
  type WireRound,
  type WireToolCall,
  type WireToolResult,
} from './wire-api.ts';

/**
 * Output items that are tool calls the agent runs itself: a function, a custom
 * (free-form input) tool, and the API's client-run built-in tools (a shell,
 * a patch, a computer). Hosted tools (web and file search) run upstream and
 * are not the agent's calls; nor is a shell the API ran in its own container,
 * whose `shell_call` comes with its `shell_call_output` (see {@link clientCalls}).
 */
const CALL_TYPES = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'shell_call', 'apply_patch_call', 'computer_call']);
/** Input items that answer them: the call's type with `_output`. */
const OUTPUT_TYPES = new Set([...CALL_TYPES].map((type) => `${type}_output`));
/** Events that end a streamed response: the round is judged on them. */
const END_TYPES = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * The OpenAI Responses API format (`POST /v1/responses`), as Codex, the
 * Agents SDK and `@ai-sdk/openai` speak it. A request carries the whole
 * conversation as input items; tool calls are `function_call` (or
 * `custom_tool_call`) output items, answered by `function_call_output` items.
 */
export const responsesWire: WireApi = {
  name: 'responses',

  isRequest(body) {
    return typeof body['input'] === 'string' || Array.isArray(body['input']);
  },

  userHint(body) {
    for (const key of ['user', 'safety_identifier']) {
      if (typeof body[key] === 'string' && body[key] !== '') return body[key];
    }
    return undefined;
  },

  promptSeed(body) {
    const input = body['input'];
    const firstUser = typeof input === 'string' ? input : asArray(input).filter(isObject).find(isUserMessage);
    return JSON.stringify([
      contentText(body['instructions'] ?? ''),
      firstUser === undefined ? '' : contentText(isObject(firstUser) ? firstUser['content'] : firstUser),
    ]);
  },

  isStream(body) {
    return body['stream'] === true;
  },

  continues(body) {
    return typeof body['previous_response_id'] === 'string' && body['previous_response_id'] !== '' ? body['previous_response_id'] : undefined;
  },

  conversation(body) {
    const conversation = body['conversation'];
    const id = isObject(conversation) ? conversation['id'] : conversation;
    return typeof id === 'string' && id !== '' ? id : undefined;
  },

  requestTail(body, lastCalls): RequestTail {
    const input = body['input'];
    if (typeof input === 'string') return { toolResults: [], userText: input, lastIndex: 0 };
    const items = asArray(input);
    const lastIndex = items.length - 1;
    const last = items[lastIndex];
    if (isObject(last) && isUserMessage(last)) return { toolResults: [], userText: contentText(last['content']), lastIndex };
    // Rounds of tool calls follow one another with nothing between them, and clients interleave a round's
    // calls with their outputs ([call a, output a, call b, output b]) or not: the request does not say where
    // the last round began. The calls of the previous response, when this proxy judged it, do; else only the
    // outputs after the last call are taken as new, which can miss a parallel call's output but never counts
    // an old one twice.
    let start = lastIndex;
    while (start >= 0 && isObject(items[start]) && isToolStep(items[start] as JsonObject)) start -= 1;
    // A request that continues a stored response (previous_response_id) holds the outputs without their calls.
    const segment = items.slice(start + 1).filter(isObject);
    // A hosted shell's output came with its call, and was judged with the response that brought both.
    const hostedShell = declaresHostedShell(body['tools']);
    const ran = (item: JsonObject): boolean => ranUpstream(item, hostedShell);
    const upstream = new Set(segment.filter(ran).map(callIdOf));
    const calls = new Map<string, WireToolCall>();
    let lastCallAt = -1;
    let lastCallId: string | undefined;
    segment.forEach((item, at) => {
      if (!isCall(item) || ran(item)) return;
      lastCallId = callIdOf(item);
      calls.set(lastCallId, toolCallOf(item));
      lastCallAt = at;
    });
    // Calls remembered from an older response (another replica judged the latest) would take old outputs for new ones.
    const known = lastCalls !== undefined && lastCalls.size > 0 && (lastCallId === undefined || lastCalls.has(lastCallId)) ? lastCalls : undefined;
    const toolResults: WireToolResult[] = [];
    let outputs = 0;
    for (const [at, item] of segment.entries()) {
      if (!OUTPUT_TYPES.has(String(item['type'])) || upstream.has(callIdOf(item))) continue;
      outputs += 1;
      const id = callIdOf(item);
      const call = known === undefined ? (at > lastCallAt ? calls.get(id) : undefined) : known.get(id);
      if (call === undefined) continue;
      // A shell's output says how each command ended, and a patch's whether it failed; other outputs are judged by their text.
      const { text: result, error } =
        item['type'] === 'shell_call_output'
          ? readShellOutput(item['output'])
          : { text: contentText(item['output'] ?? ''), error: item['status'] === 'failed' };
      toolResults.push({ id, name: call.name, args: call.args, ...(call.print === undefined ? {} : { print: call.print }), result, error });
    }
    return { toolResults, userText: null, lastIndex, ...(known === undefined && outputs > 0 ? { unmatched: true } : {}) };
  },

  withSteers(body, text) {
    const input = body['input'];
    const items = typeof input === 'string' ? [{ role: 'user', content: input }] : asArray(input).slice();
    const last = items.at(-1);
    // Like the library's own tool loop: the note rides on the tool result the model reads next.
    if (isObject(last) && OUTPUT_TYPES.has(String(last['type'])) && typeof last['output'] === 'string') {
      items[items.length - 1] = { ...last, output: `${last['output']}\n\n${text}` };
    } else {
      items.push({ type: 'message', role: 'developer', content: text });
    }
    return { ...body, input: items };
  },

  roundOf(response) {
    const output = asArray(response['output']).filter(isObject);
    return {
      ...(typeof response['id'] === 'string' ? { responseId: response['id'] } : {}),
      ...(response['store'] === false ? { stored: false } : {}),
      text: outputText(output),
      ...modelOf(response),
      ...usageOf(response['usage']),
      toolCalls: clientCalls(output).map(toolCallOf),
      hosted: responsesItemCalls(output),
    };
  },

  withBlocks(response, blocked) {
    const output = asArray(response['output']).filter(isObject);
    const names = new Map(output.filter(isCall).map((item) => [callIdOf(item), toolNameOf(item)]));
    const kept = output.filter((item) => !(isCall(item) && blocked.has(callIdOf(item))));
    return { ...response, output: [...kept, messageItem(newId('msg'), blockText(blocked, names))] };
  },

  stopResponse(request, text, upstream) {
    return {
      id: typeof upstream?.['id'] === 'string' ? upstream['id'] : newId('resp'),
      object: 'response',
      created_at: typeof upstream?.['created_at'] === 'number' ? upstream['created_at'] : Math.floor(Date.now() / 1000),
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: typeof upstream?.['model'] === 'string' ? upstream['model'] : String(request['model'] ?? 'unknown'),
      output: [...ranBeforeStop(asArray(upstream?.['output']).filter(isObject)), messageItem(newId('msg'), text)],
      usage: isObject(upstream?.['usage']) ? upstream['usage'] : ZERO_USAGE,
    };
  },

  stopEvents(request, text) {
    const shell = {
      id: newId('resp'),
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      error: null,
      incomplete_details: null,
      model: String(request['model'] ?? 'unknown'),
      usage: null,
    };
    const item = messageItem(newId('msg'), text);
    const events = [
      named('response.created', { response: { ...shell, status: 'in_progress', output: [] } }),
      ...messageEvents(item, 0, text),
      named('response.completed', { response: { ...shell, status: 'completed', output: [item], usage: ZERO_USAGE } }),
    ];
    return sequenced(events, 0);
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
    return named('error', { code: 'upstream_unreachable', message, param: null });
  },

  streamRewriter() {
    return new ResponsesStreamRewriter();
  },
};

const ZERO_USAGE = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };

function isUserMessage(item: JsonObject): boolean {
  return (item['type'] === undefined || item['type'] === 'message') && item['role'] === 'user';
}

function isToolStep(item: JsonObject): boolean {
  const type = String(item['type']);
  return CALL_TYPES.has(type) || OUTPUT_TYPES.has(type) || type === 'reasoning';
}

function isCall(item: JsonObject): boolean {
  return CALL_TYPES.has(String(item['type']));
}

/**
 * The calls of a response the client is to run: a `shell_call` answered by a
 * `shell_call_output` in the same response ran in the API's container (a
 * hosted shell), and is judged as run (see {@link responsesItemCalls}).
 */
function clientCalls(output: readonly JsonObject[]): JsonObject[] {
  const answered = new Set(output.filter((item) => item['type'] === 'shell_call_output').map(callIdOf));
  return output.filter((item) => isCall(item) && !(item['type'] === 'shell_call' && answered.has(callIdOf(item))));
}

/**
 * What of an answer a stop keeps, as a streamed stop does: the calls the API
 * has run (hosted searches, code, MCP calls, a hosted shell's call and its
 * output) and the reasoning among them. Not the model's text, which the stop
 * message stands in for, nor the calls the client was to run.
 */
function ranBeforeStop(output: readonly JsonObject[]): JsonObject[] {
  const refused = new Set(clientCalls(output));
  return output.filter((item) => item['type'] !== 'message' && !refused.has(item));
}

/**
 * A shell call the API ran in its own container, as a request brings it
 * back: its environment is that container; one brought back without an
 * environment (`@ai-sdk/openai` leaves it out when the API does not store
 * responses) ran there when the request's shell tool runs there
 * (`hostedShell`). (A response tells it by the output that comes with it; a
 * request holds a local shell's output beside its call just the same.)
 */
function ranUpstream(item: JsonObject, hostedShell: boolean): boolean {
  if (item['type'] !== 'shell_call') return false;
  const environment = item['environment'];
  return isObject(environment) ? environment['type'] === 'container_reference' : hostedShell;
}

/** The environments of a shell tool that runs in the API's container: one it makes for the request, or one it made before. */
const HOSTED_SHELL_ENVIRONMENTS: ReadonlySet<unknown> = new Set(['container_auto', 'container_reference']);

/** Whether a request's shell tool runs in the API's container (a hosted shell): then its shell calls are not the client's. */
function declaresHostedShell(tools: unknown): boolean {
  return asArray(tools).some(
    (tool) => isObject(tool) && tool['type'] === 'shell' && isObject(tool['environment']) && HOSTED_SHELL_ENVIRONMENTS.has(tool['environment']['type']),
  );
}

/** A function call's arguments (JSON text), a custom tool's free-form input, or a built-in tool's action (a patch's operation). */
function callArgs(item: JsonObject): unknown {
  if (item['type'] === 'function_call') return parseArgs(item['arguments']);
  if (item['type'] === 'custom_tool_call') return String(item['input'] ?? '');
  return item['action'] ?? item['operation'] ?? {};
}

/** A call's id; a local shell's output names it by `id`. */
function callIdOf(item: JsonObject): string {
  return String(item['call_id'] ?? item['id']);
}

/** A function's or custom tool's name; a built-in tool is named by its type (`shell`, `apply_patch`, …). */
function toolNameOf(item: JsonObject): string {
  return typeof item['name'] === 'string' ? item['name'] : String(item['type']).replace(/_call$/, '');
}

function toolCallOf(item: JsonObject): WireToolCall {
  return { id: callIdOf(item), name: toolNameOf(item), args: callArgs(item) };
}

function outputText(output: readonly JsonObject[]): string {
  return output
    .filter((item) => item['type'] === 'message')
    .flatMap((item) => asArray(item['content']).filter(isObject))
    .map((part) => (typeof part['text'] === 'string' ? part['text'] : ''))
    .join('');
}

function usageOf(usage: unknown): { promptTokens: number | null; completionTokens: number | null } {
  if (!isObject(usage)) return { promptTokens: null, completionTokens: null };
  return { promptTokens: tokenCount(usage['input_tokens']), completionTokens: tokenCount(usage['output_tokens']) };
}

/** An id for an item or a response the proxy writes: unique, since a later request may name a response by it. */
function newId(kind: 'resp' | 'msg'): string {
  return `${kind}_governor_${randomUUID().replaceAll('-', '')}`;
}

function messageItem(id: string, text: string): JsonObject {
  return { type: 'message', id, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

function named(type: string, fields: JsonObject): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...fields }) };
}

/** The events that stream a complete message item at `index`. */
function messageEvents(item: JsonObject, index: number, text: string): SseEvent[] {
  const at = { item_id: item['id'], output_index: index, content_index: 0 };
  const part = { type: 'output_text', text: '', annotations: [] };
  return [
    named('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }),
    named('response.content_part.added', { ...at, part }),
    named('response.output_text.delta', { ...at, delta: text, logprobs: [] }),
    named('response.output_text.done', { ...at, text, logprobs: [] }),
    named('response.content_part.done', { ...at, part: { ...part, text } }),
    named('response.output_item.done', { output_index: index, item }),
  ];
}

/** The events with their `sequence_number` counted on from `first`, as clients expect them. */
function sequenced(events: readonly SseEvent[], first: number): SseEvent[] {
  return events.map((event, i) => {
    const value = parseJson(event.data);
    return isObject(value) ? { ...event, data: JSON.stringify({ ...value, sequence_number: first + i }) } : event;
  });
}

/** A held event, parsed. */
interface Held {
  readonly event: SseEvent;
  readonly value: JsonObject | undefined;
}

interface PendingCall {
  /** The call's item as last seen (added, then done). */
  item: JsonObject;
  /** Arguments or input streamed in deltas so far. */
  streamed: string;
}

/**
 * Text passes through at once. From the first tool-call item on, events are
 * held (tool calls are judged as a whole), and so is the event that ends the
 * response (the round is judged on it, with its usage). A blocked call's
 * events are dropped (on a stop, every call's and the held text's) and the
 * items after it renumbered, since clients keep output items in an array by
 * `output_index`; the explanation is a message item of its own, and the
 * final response's output says the same.
 */
class ResponsesStreamRewriter implements StreamRewriter {
  #text = '';
  #usage: { promptTokens: number | null; completionTokens: number | null } = { promptTokens: null, completionTokens: null };
  /** Output index → the call streamed there. */
  readonly #calls = new Map<number, PendingCall>();
  /** Output index → a call the upstream ran itself (a search passed on at once: it has run; a hosted shell, held with the calls it came among). */
  readonly #hosted = new Map<number, HostedEvent>();
  /** Output index → the id of a message item held, not sent: a stop's message stands in for it. */
  readonly #heldMessages = new Map<number, string>();
  readonly #held: Held[] = [];
  /** Output index → the item as it was done, sent or held: what a response cut short before its end was. */
  readonly #done = new Map<number, JsonObject>();
  #holding = false;
  #shell: JsonObject = {};
  /** The next output index after everything seen. */
  #nextIndex = 0;
  /** Sequence number of the next event sent once the round is judged. */
  #sentSequence = 0;

  accept(event: SseEvent): SseEvent[] {
    const value = parseJson(event.data);
    if (!isObject(value)) return this.#pass({ event, value: undefined });
    const type = String(value['type'] ?? event.event);
    const index = typeof value['output_index'] === 'number' ? value['output_index'] : undefined;
    if (index !== undefined) this.#nextIndex = Math.max(this.#nextIndex, index + 1);
    if (isObject(value['response'])) this.#shell = value['response'];
    const item = isObject(value['item']) ? value['item'] : undefined;
    if (item !== undefined && index !== undefined && type === 'response.output_item.done') this.#done.set(index, item);
    if (this.#holding && type === 'response.output_item.added' && index !== undefined && item?.['type'] === 'message') {
      this.#heldMessages.set(index, callIdOf(item));
    }

    if (item !== undefined && index !== undefined && isCall(item)) {
      this.#holding = true;
      const call = this.#calls.get(index);
      if (call === undefined) this.#calls.set(index, { item, streamed: '' });
      else call.item = item;
    } else if (item !== undefined && type === 'response.output_item.done' && item['type'] === 'shell_call_output') {
      this.#ranUpstream(item);
    } else if (item !== undefined && index !== undefined && type === 'response.output_item.done') {
      const call = responsesItemCall(item);
      if (call !== undefined) this.#hosted.set(index, call);
    } else if (type === 'response.function_call_arguments.delta' || type === 'response.custom_tool_call_input.delta') {
      const call = index === undefined ? undefined : this.#calls.get(index);
      if (call !== undefined && typeof value['delta'] === 'string') call.streamed += value['delta'];
    } else if (type === 'response.output_text.delta' && typeof value['delta'] === 'string') {
      this.#text += value['delta'];
    } else if (END_TYPES.has(type)) {
      this.#holding = true;
      const response = isObject(value['response']) ? value['response'] : {};
      this.#usage = usageOf(response['usage']);
    }
    return this.#pass({ event, value });
  }

  /**
   * A shell call answered in the response itself ran in the API's container:
   * not the client's to run, it is judged as run, in its call's place.
   */
  #ranUpstream(output: JsonObject): void {
    const id = callIdOf(output);
    for (const [index, { item }] of this.#calls) {
      if (item['type'] !== 'shell_call' || callIdOf(item) !== id) continue;
      this.#calls.delete(index);
      const call = responsesShellCall(item, output);
      if (call !== undefined) this.#hosted.set(index, call);
      return;
    }
  }

  #pass(held: Held): SseEvent[] {
    if (this.#holding) {
      this.#held.push(held);
      return [];
    }
    if (held.value !== undefined && typeof held.value['sequence_number'] === 'number') this.#sentSequence = held.value['sequence_number'] + 1;
    return [held.event];
  }

  round(): WireRound {
    const toolCalls = [...this.#calls.values()].map(({ item, streamed }) => {
      // The finished item carries the whole arguments; a stream cut short has only its deltas.
      const whole = item['type'] === 'function_call' ? item['arguments'] : item['type'] === 'custom_tool_call' ? item['input'] : undefined;
      return toolCallOf(whole === '' && streamed !== '' ? { ...item, arguments: streamed, input: streamed } : item);
    });
    const id = this.#shell['id'];
    return {
      ...(typeof id === 'string' ? { responseId: id } : {}),
      ...(this.#shell['store'] === false ? { stored: false } : {}),
      text: this.#text,
      ...modelOf(this.#shell),
      ...this.#usage,
      toolCalls,
      hosted: [...this.#hosted].sort(([a], [b]) => a - b).map(([, call]) => call),
    };
  }

  finish(verdict: RoundVerdict): SseEvent[] {
    if (verdict.stop === undefined && verdict.blocked.size === 0) return this.#held.map((h) => h.event);
    const stop = verdict.stop !== undefined;
    // A stop drops every call, and the text not sent yet, as a stop not streamed does (see ranBeforeStop); a block, the blocked calls.
    const dropped = new Map<number, string>(stop ? this.#heldMessages : []);
    for (const [index, { item }] of this.#calls) {
      if (stop || verdict.blocked.has(callIdOf(item))) dropped.set(index, callIdOf(item));
    }
    const droppedIds = new Set(dropped.values());
    const names = new Map([...this.#calls.values()].map((c) => [callIdOf(c.item), toolNameOf(c.item)]));
    // The note is a message item of its own: nothing to separate it from.
    const text = stop ? verdict.stop.text : blockText(verdict.blocked, names);
    const renumber = (index: number): number => index - [...dropped.keys()].filter((d) => d < index).length;
    const noteIndex = renumber(this.#nextIndex);
    const note = messageItem(newId('msg'), text);

    const out: SseEvent[] = [];
    let end: JsonObject | undefined;
    for (const { event, value } of this.#held) {
      if (value === undefined) {
        out.push(event);
        continue;
      }
      if (END_TYPES.has(String(value['type']))) {
        end = value;
        continue;
      }
      const index = typeof value['output_index'] === 'number' ? value['output_index'] : undefined;
      if (index !== undefined && dropped.has(index)) continue;
      out.push(index === undefined ? event : { ...event, data: JSON.stringify({ ...value, output_index: renumber(index) }) });
    }
    out.push(...messageEvents(note, noteIndex, text));
    // A block keeps how the response ended, and that it did not when the upstream cut it short (the client's SDK
    // then reads it as interrupted, as it would without the proxy); a stop is the proxy's own answer, and ends as complete.
    if (!stop && end === undefined) return sequenced(out, this.#sentSequence);
    const done = [...this.#done].sort(([a], [b]) => a - b).map(([, item]) => item);
    const response = isObject(end?.['response']) ? end['response'] : { ...this.#shell, output: done, usage: ZERO_USAGE };
    // A hosted shell's call has run: it stays, with its output (which has its call's id).
    const kept = (item: unknown): boolean => !(isObject(item) && (isCall(item) || item['type'] === 'message') && droppedIds.has(callIdOf(item)));
    const output = [...asArray(response['output']).filter(kept), note];
    const endType = stop || end === undefined ? 'response.completed' : String(end['type']);
    out.push(named(endType, { response: { ...response, ...(endType === 'response.completed' ? { status: 'completed' } : {}), output } }));
    return sequenced(out, this.#sentSequence);
  }
}
