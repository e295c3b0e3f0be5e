import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { InMemoryBreakerStore, type BreakerStore, type SessionOp, type SessionReducer } from './index.ts';
import { decodeOp, encodeOp, InvalidOpError } from './op-codec.ts';
import { ALL_DETECTORS, replayCorpusFile } from './test-support/replay-corpus.ts';

function roundTrip(op: SessionOp): string {
  const encoded = encodeOp(op);
  assert.deepEqual(decodeOp(encoded), op, encoded);
  return encoded;
}

/** A store that checks that every operation, digested as a log keeps it, survives encoding unchanged. */
class LoggingStore implements BreakerStore {
  readonly inner = new InMemoryBreakerStore({ maxSessions: 100_000 });
  readonly byKind = new Map<string, { compact: number; json: number; encodedBytes: number; jsonBytes: number }>();

  read(sessionId: string) {
    return this.inner.read(sessionId);
  }

  async apply(sessionId: string, op: SessionOp, reducer: SessionReducer) {
    const logged = reducer.digest?.(op) ?? op;
    const encoded = roundTrip(logged);
    const kind = logged.k === 'observe' ? `observe ${logged.event.kind}${logged.t === undefined ? '' : ' (sub-agent)'}` : logged.k;
    const tally = this.byKind.get(kind) ?? { compact: 0, json: 0, encodedBytes: 0, jsonBytes: 0 };
    if (encoded.startsWith('O1')) tally.compact++;
    else tally.json++;
    tally.encodedBytes += encoded.length;
    tally.jsonBytes += JSON.stringify(logged).length;
    this.byKind.set(kind, tally);
    return this.inner.apply(sessionId, logged, reducer);
  }

  delete(sessionId: string) {
    return this.inner.delete(sessionId);
  }
}

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** The sub-agents of bench/corpus/multi-agent.jsonl called as tools, so that their calls are logged in the sub-agent shape. */
const subAgentTools = ['code_reviewer', 'research_agent', 'web_researcher', 'incident_agent', 'data_agent', 'sql_analyst'];

const fp = { h: 2 ** 53 - 1, f: 'content|tg0i20Mh1l+1uF2&h3543A!3.c4+H5FO5K$6G67{r9bV9fh9tepath|ihL>bxquery|t32(FgYflS7' };
const task = { sketch: '~0[G3e<51c5dr5-f5=@7KY8iH9Rm9{U', identity: 3_156_773_898 };
const answer = { o: '~3q)3u$7P1ai:fqbf%khr0vC@y1zy%Nz', n: 22, h: 897_575_123_456 };
const at = 1_795_502_193_897;

describe('op codec', () => {
  test('every compact shape round-trips, with each of its flags', () => {
    const names = ['search', 'naïve_工具', 'a"b\\c|d', ''];
    const ops: SessionOp[] = [];
    for (const tool of names) {
      const event = { kind: 'tool_call', tool, args: null, result: null } as const;
      const p = { tool, fp };
      ops.push(
        { k: 'observe', at, event, p, d: { r: 0, e: 0 } },
        { k: 'observe', at: 0, event: { ...event, error: true }, surfaced: true, p, d: { r: 7, e: 1, v: 1 } },
        { k: 'observe', at, event: { ...event, error: false }, p: { tool: `${tool}…`, fp: { h: 0, f: '' } }, d: { r: 2 ** 52, e: 2 } },
        { k: 'observe', at, event, p, t: task, a: answer },
        { k: 'observe', at, event: { ...event, error: true }, surfaced: true, p: { tool: 'short', fp }, t: { ...task, identity: 0 }, a: { ...answer, e: 2 } },
        { k: 'observe', at, event: { kind: 'delegation', agent: tool, input: '', output: '' }, t: task, a: answer },
        { k: 'observe', at, event: { kind: 'delegation', agent: tool, input: '', output: '' }, surfaced: true, t: task, a: { o: '', n: 0, h: 0, e: 2 } },
        { k: 'tool', at, call: { tool, args: null }, p },
        { k: 'tool', at, call: { tool, args: null }, p: { tool: 'other', fp }, t: task },
      );
    }
    for (const op of ops) assert.ok(roundTrip(op).startsWith('O1'), `compact: ${JSON.stringify(op)}`);
  });

  test('a digested tool call takes at most 60 % of its JSON', () => {
    const op: SessionOp = {
      k: 'observe',
      at,
      event: { kind: 'tool_call', tool: 'search', args: null, result: null },
      p: { tool: 'search', fp },
      d: { r: 2_835_166_679_146_641, e: 0 },
    };
    const encoded = roundTrip(op);
    assert.ok(encoded.length <= 0.6 * JSON.stringify(op).length, `${encoded.length} of ${JSON.stringify(op).length}`);
  });

  test('operations of other shapes stay JSON and round-trip', () => {
    const event = { kind: 'tool_call', tool: 'search', args: null, result: null } as const;
    const ops = [
      { k: 'model', at },
      { k: 'reset', at, evidence: true },
      { k: 'observe', at, event: { kind: 'model', promptTokens: 10, completionTokens: null, text: 'hello', costUsd: 0.25 } },
      { k: 'observe', at, event: { kind: 'user', text: 'go on' } },
      { k: 'observe', at, event: { kind: 'retrieval', query: 'q', results: ['a'] } },
      // Not digested (raw arguments), an unknown key, a fractional or negative number, unpacked fields, an unknown error kind.
      { k: 'observe', at, event: { ...event, args: { path: 'a' } }, p: { tool: 'search', fp }, d: { r: 1, e: 0 } },
      { k: 'observe', at, event: { ...event, id: 'x' }, p: { tool: 'search', fp }, d: { r: 1, e: 0 } },
      { k: 'observe', at: 1.5, event, p: { tool: 'search', fp }, d: { r: 1, e: 0 } },
      { k: 'observe', at, event, p: { tool: 'search', fp: { h: -1, f: '' } }, d: { r: 1, e: 0 } },
      { k: 'observe', at, event, p: { tool: 'search', fp: { h: 1, f: [['path', 'i', 5]] } }, d: { r: 1, e: 0 } },
      { k: 'observe', at, event, p: { tool: 'search', fp }, d: { r: 1, e: 3 } },
      { k: 'observe', at, event, p: { tool: 'search', fp }, d: { r: 1, e: 0 }, t: task, a: answer },
      { k: 'tool', at, call: { tool: 'search', args: { q: 1 } } },
      { k: 'observe', at, event: { kind: 'delegation', agent: 'a', input: 'raw task', output: '' }, t: task, a: answer },
    ] as unknown as SessionOp[];
    for (const op of ops) {
      const encoded = roundTrip(op);
      assert.equal(encoded, JSON.stringify(op));
    }
  });

  test('rejects text that is not a logged operation', () => {
    const texts = ['', 'hello', 'O2["0"]', 'O1[', 'O1[5]', 'O1["9100"]', 'O1["0"]', 'O1["0100000",1]', 'O1["3",""]', '{"k":'];
    // JSON of another shape, or of an operation this version does not know.
    texts.push(
      '{}',
      '{"k":"undo","at":1}',
      '{"k":"model"}',
      '{"k":"model","at":"1"}',
      '{"k":"observe","at":1}',
      '{"k":"observe","at":1,"event":{}}',
      '{"k":"tool","at":1,"call":null}',
    );
    // A valid compact operation with a string too many, and with its head cut short.
    const valid = encodeOp({ k: 'tool', at, call: { tool: 'x', args: null }, p: { tool: 'x', fp } });
    texts.push(valid.replace(/\]$/, ',"extra"]'), valid.replace(/^O1\["(.)./, 'O1["$1'));
    for (const text of texts) {
      assert.throws(
        () => decodeOp(text),
        (error: unknown) => InvalidOpError.isInstance(error) && (error as InvalidOpError).code === 'GOVERNOR_INVALID_OP',
        text,
      );
    }
  });

  test('every operation of every trajectory of bench/corpus, digested, round-trips; tool and sub-agent calls in the compact form', async () => {
    const dir = path.join(repoRoot, 'bench/corpus');
    const store = new LoggingStore();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl')))
      await replayCorpusFile(path.join(dir, file), store, { ...ALL_DETECTORS, delegation: { enabled: true, subAgentTools } });
    const tool = store.byKind.get('observe tool_call');
    assert.ok(tool !== undefined && tool.compact > 4_000, JSON.stringify([...store.byKind]));
    assert.equal(tool.json, 0);
    assert.equal(store.byKind.get('tool')?.json, 0);
    const subAgent = store.byKind.get('observe tool_call (sub-agent)');
    assert.ok(subAgent !== undefined && subAgent.compact > 50 && subAgent.json === 0, JSON.stringify([...store.byKind]));
    assert.ok(tool.encodedBytes < 0.7 * tool.jsonBytes, `${tool.encodedBytes} of ${tool.jsonBytes} bytes`);
  });

  const realRuns = path.join(repoRoot, '../shared/corpus/real-dev.jsonl');
  test('every operation of the recorded real runs, digested, round-trips', {
    skip: !existsSync(realRuns) && 'no real-run corpus beside the repository',
  }, async () => {
    const store = new LoggingStore();
    await replayCorpusFile(realRuns, store);
    const tool = store.byKind.get('observe tool_call');
    assert.ok(tool !== undefined && tool.compact > 2_000 && tool.json === 0, JSON.stringify([...store.byKind]));
  });
});
