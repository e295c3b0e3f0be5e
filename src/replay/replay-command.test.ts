import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { gzipSync } from 'node:zlib';
import type { BreakerEvent, ProposedToolCall } from '../breaker/breaker-event.ts';
import { InMemoryBreakerStore } from '../breaker/in-memory-breaker-store.ts';
import { runReplayCommand, type ReplayIo } from './replay-command.ts';
import type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';

const BIN = new URL('../cli/bin.ts', import.meta.url).pathname;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'governor-replay-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeFile(name: string, content: string): string {
  const target = path.join(dir, name);
  fs.writeFileSync(target, content);
  return target;
}

class Capture {
  text = '';
  readonly isTTY: boolean;
  constructor(isTTY = false) {
    this.isTTY = isTTY;
  }
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

function io(options: { tty?: boolean } = {}): ReplayIo & { stdout: Capture; stderr: Capture } {
  return { stdout: new Capture(), stderr: new Capture(options.tty ?? false), cwd: dir };
}

/** Stops at the third identical call of a tool (a stand-in with a rule simple enough to predict by hand). */
class ThirdRepeatStops implements ReplayableBreaker {
  readonly #seen = new Map<string, number>();
  async checkModelCall(): Promise<ReplayDecision> {
    return { action: 'allow' };
  }
  async checkToolCall(_s: string, call: ProposedToolCall): Promise<ReplayDecision> {
    const key = `${call.tool}:${JSON.stringify(call.args)}`;
    const n = (this.#seen.get(key) ?? 0) + 1;
    this.#seen.set(key, n);
    return n >= 3
      ? { action: 'stop', category: 'tool_spiral', message: `${call.tool} repeated`, evidence: { detail: `${call.tool} called ${n} times` } }
      : { action: 'allow' };
  }
  async observe(_s: string, _e: BreakerEvent): Promise<ReplayDecision> {
    return { action: 'allow' };
  }
}

const looping = {
  id: 'loop',
  steps: [
    { kind: 'user', text: 'find it' },
    { kind: 'model', prompt_tokens: 10, completion_tokens: 5, text: '' },
    { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'none' },
    { kind: 'model', prompt_tokens: 20, completion_tokens: 5, text: '' },
    { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'none' },
    { kind: 'model', prompt_tokens: 30, completion_tokens: 5, text: '' },
    { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'none' },
    { kind: 'model', prompt_tokens: 40, completion_tokens: 5, text: 'giving up' },
  ],
};
const productive = {
  id: 'fine',
  steps: [
    { kind: 'model', prompt_tokens: null, completion_tokens: null, text: '' },
    { kind: 'tool_call', tool: 'read', args: 'a.txt', result: 'A' },
    { kind: 'model', prompt_tokens: null, completion_tokens: null, text: 'done' },
  ],
};

const corpus = writeFile(
  'corpus.jsonl',
  [JSON.stringify(looping), '{not json', JSON.stringify(productive), JSON.stringify({ id: 'x', steps: [{ kind: 'dream' }] })].join('\n') + '\n',
);

const stub = { createBreaker: () => new ThirdRepeatStops() };

/** The figure (caption and chart) whose caption starts with `title`. */
function figure(html: string, title: string): string {
  const start = html.indexOf(`<figure><figcaption>${title}`);
  assert.notEqual(start, -1, `no chart "${title}"`);
  return html.slice(start, html.indexOf('</figure>', start));
}

/** What the bars of a chart add up to. */
function chartTotal(html: string, title: string): number {
  return [...figure(html, title).matchAll(/<title>[^<]*: ([\d,]+) \w+<\/title>/g)].reduce((sum, m) => sum + Number(m[1]!.replace(/,/g, '')), 0);
}

/** A headline figure of the report. */
function card(html: string, label: string): number {
  const match = new RegExp(`<b>([\\d,]+)</b>${label}`).exec(html);
  assert.ok(match, `no card "${label}"`);
  return Number(match[1]!.replace(/,/g, ''));
}

/** A breaker that steers the looping search and never stops anything. */
const steerOnly = {
  createBreaker: (): ReplayableBreaker => ({
    checkModelCall: async () => ({ action: 'allow' }),
    checkToolCall: async (_s, call) =>
      JSON.stringify(call.args) === '{"q":"x"}' ? { action: 'steer', category: 'tool_spiral', message: 'try another query' } : { action: 'allow' },
    observe: async () => ({ action: 'allow' }),
  }),
};

describe('governor replay', () => {
  test('--json prints one object per trajectory in input order; malformed lines go to stderr; exit 0', async () => {
    const out = io();
    const code = await runReplayCommand(['corpus.jsonl', '--json'], out, stub);
    assert.equal(code, 0);
    const lines = out.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines, [
      {
        id: 'loop',
        tripped: true,
        category: 'tool_spiral',
        step: 6,
        action: 'stop',
        reason: 'search called 3 times',
        stop_step: 6,
        stop_category: 'tool_spiral',
        steps_total: 8,
        tokens_total: 120,
        tokens_after_steer: 0,
        tokens_after_trip: 45,
      },
      { id: 'fine', tripped: false, steps_total: 3, tokens_total: 0, tokens_after_steer: 0, tokens_after_trip: 0 },
    ]);
    assert.match(out.stderr.text, /^line 2: invalid JSON/m);
    assert.match(out.stderr.text, /^line 4: .*unknown step kind "dream"/m);
  });

  test('without --json prints a table and a summary', async () => {
    const out = io();
    const code = await runReplayCommand([corpus], out, stub);
    assert.equal(code, 0);
    const text = out.stdout.text;
    assert.match(text, /^STEPS\s+TRIPPED\s+CATEGORY\s+STEP\s+SAVED\s+ID$/m);
    assert.match(text, /^8\s+yes\s+tool_spiral\s+6\s+2 steps, 45 tokens\s+loop$/m);
    assert.match(text, /^3\s+no\s+-\s+-\s+-\s+fine$/m);
    assert.match(text, /Trajectories: 2 replayed, 1 tripped \(50\.0%\), 2 malformed lines skipped/);
    assert.match(text, /^ {2}tool_spiral\s+1\s+2 steps saved$/m);
    assert.match(text, /Tokens that would have been saved \(from each stop\): 45 of 120 \(37\.5%\); 1 trajectories had no token counts/);
    assert.match(text, /Steered: 0; would have stopped \(under the configured ladder\): 1/);
  });

  test('says tokens are unknown when the file has no token counts', async () => {
    const file = writeFile('no-tokens.jsonl', JSON.stringify(productive) + '\n');
    const out = io();
    assert.equal(await runReplayCommand([file], out, stub), 0);
    assert.match(out.stdout.text, /Tokens that would have been saved: unknown/);
  });

  test('a missing file is a usage error naming the file (exit 2)', async () => {
    const out = io();
    const code = await runReplayCommand(['nowhere.jsonl'], out, stub);
    assert.equal(code, 2);
    assert.match(out.stderr.text, /cannot read nowhere\.jsonl: no such file/);
    assert.equal(out.stdout.text, '');
  });

  test('no file at all, or an unknown flag, is a usage error', async () => {
    const none = io();
    assert.equal(await runReplayCommand([], none, stub), 2);
    assert.match(none.stderr.text, /missing the trajectory file/);
    const unknown = io();
    assert.equal(await runReplayCommand([corpus, '--fast'], unknown, stub), 2);
    assert.match(unknown.stderr.text, /--fast/);
  });

  test('--max-line-bytes N skips longer lines as malformed and replays the rest', async () => {
    const short = JSON.stringify(productive);
    const file = writeFile('long-line.jsonl', `${JSON.stringify(looping)}\n${short}\n`);
    const out = io();
    assert.equal(await runReplayCommand([file, '--json', '--max-line-bytes', String(short.length + 1)], out, stub), 0);
    assert.deepEqual(
      out.stdout.text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
      ['fine'],
    );
    assert.match(out.stderr.text, new RegExp(`^line 1: line is longer than ${short.length + 1} bytes`, 'm'));
    const whole = io();
    assert.equal(await runReplayCommand([file, '--json'], whole, stub), 0);
    assert.equal(whole.stdout.text.trim().split('\n').length, 2, 'the default reads both lines');
  });

  test('a --max-line-bytes that is not a positive whole number is a usage error (exit 2)', async () => {
    for (const bad of ['0', '-5', '1.5', 'lots', '', '99999999999999999999']) {
      const out = io();
      assert.equal(await runReplayCommand([corpus, `--max-line-bytes=${bad}`], out, stub), 2, bad);
      assert.match(out.stderr.text, /--max-line-bytes must be a positive whole number of bytes/);
      assert.equal(out.stdout.text, '');
    }
    const help = io();
    assert.equal(await runReplayCommand(['--help'], help, stub), 0);
    assert.match(help.stdout.text, /--max-line-bytes N/);
  });

  test('a --config that is not JSON is a usage error naming the config file', async () => {
    const config = writeFile('bad-config.json', '{ "toolSpiral": ');
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--config', config], out, stub), 2);
    assert.match(out.stderr.text, /--config .*bad-config\.json is not valid JSON/);
  });

  test("options the breaker rejects are a usage error with the breaker's explanation", async () => {
    const config = writeFile('rejected.json', '{"window": -1}');
    const out = io();
    const code = await runReplayCommand([corpus, '--config', config], out, {
      createBreaker: (options) => {
        if (options && options['window'] === -1) throw new Error('Invalid option "window": must be positive');
        return new ThirdRepeatStops();
      },
    });
    assert.equal(code, 2);
    assert.match(out.stderr.text, /--config .*rejected\.json: Invalid option "window": must be positive/);
  });

  test('passes the --config options to the breaker', async () => {
    const config = writeFile('config.json', '{"marker": 7}');
    const seen: unknown[] = [];
    const out = io();
    await runReplayCommand([corpus, '--json', `--config=${config}`], out, {
      createBreaker: (options) => {
        seen.push(options);
        return new ThirdRepeatStops();
      },
    });
    assert.ok(seen.length >= 2);
    assert.ok(seen.every((o) => JSON.stringify(o) === '{"marker":7}'));
  });

  test('a --config saved with a byte-order mark (as Windows editors write it) is read', async () => {
    const config = writeFile('bom-config.json', '\uFEFF{"marker": 8}');
    const seen: unknown[] = [];
    const out = io();
    assert.equal(
      await runReplayCommand([corpus, '--json', '--config', config], out, {
        createBreaker: (options) => {
          seen.push(options);
          return new ThirdRepeatStops();
        },
      }),
      0,
      out.stderr.text,
    );
    assert.deepEqual(seen[0], { marker: 8 });
  });

  test('prints progress lines on a terminal only', async () => {
    const lines = Array.from({ length: 5 }, (_, i) => JSON.stringify({ ...productive, id: `p${i}` })).join('\n');
    const file = writeFile('five.jsonl', lines + '\n');
    const tty = io({ tty: true });
    await runReplayCommand([file, '--json'], tty, { ...stub, progressEvery: 2 });
    assert.equal((tty.stderr.text.match(/trajectories replayed/g) ?? []).length, 2);
    const pipe = io();
    await runReplayCommand([file, '--json'], pipe, { ...stub, progressEvery: 2 });
    assert.equal(pipe.stderr.text, '');
  });

  test('--html writes a self-contained report with SVG charts', async () => {
    const out = io();
    const code = await runReplayCommand([corpus, '--json', '--html', 'report.html'], out, stub);
    assert.equal(code, 0);
    const html = fs.readFileSync(path.join(dir, 'report.html'), 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.equal((html.match(/<svg /g) ?? []).length, 4);
    assert.match(html, /Trips by category/);
    assert.match(html, /Steps saved by category/);
    assert.match(html, /search called 3 times/);
    // Nothing fetched from elsewhere: no scripts, stylesheets, images or links out.
    assert.doesNotMatch(html, /<script|<link|<img|src=|href=|url\(/i);
  });

  test('--html lists each tripped run as a drill-down: steps around the trip, repeats side by side, evidence', async () => {
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--html', 'drill.html'], out, stub), 0);
    const html = fs.readFileSync(path.join(dir, 'drill.html'), 'utf8');
    assert.equal((html.match(/<details class="run /g) ?? []).length, 1);
    assert.match(html, /The repeated steps side by side/);
    assert.match(html, /<th>step 2<\/th><th>step 4<\/th><th>step 6<\/th>/);
    assert.match(html, /<tr class="same"><th><bdi>args\.q<\/bdi><small>same<\/small><\/th>/);
    assert.match(html, /&#34;detail&#34;: &#34;search called 3 times&#34;/);
    assert.match(html, /stopped at step 6, saves 2 steps, 45 tokens/);
    assert.match(html, /<input type="radio" name="category" id="c0"><label for="c0">tool_spiral \(1\)<\/label>/);
  });

  test('--explain ID prints the drill-down of that run alone', async () => {
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--explain', 'loop'], out, stub), 0);
    const text = out.stdout.text;
    assert.match(text, /^line 1 {2}loop: stop \(tool_spiral\) at step 6 of 8$/m);
    assert.match(text, /^Stopped at step 6 \(tool_spiral\); saved: 2 steps, 45 tokens$/m);
    assert.match(text, /^>> 6 tool_call {2}search\(\{"q":"x"\}\)$/m);
    assert.match(text, /^ = 4 tool_call {2}search/m);
    assert.match(text, /^ x 7 model/m);
    assert.match(text, /^ {2}args\.q: same in all — x$/m);
    assert.doesNotMatch(text, /STEPS\s+TRIPPED/);
  });

  test('--explain of a run the breaker only steered says nothing was saved', async () => {
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--explain', 'loop'], out, steerOnly), 0);
    assert.match(out.stdout.text, /^line 1 {2}loop: steer \(tool_spiral\) at step 2 of 8$/m);
    assert.match(out.stdout.text, /^Not stopped under the configured ladder: the agent runs on under the steer, nothing saved$/m);
    assert.doesNotMatch(out.stdout.text, /^ x /m);
  });

  test('--explain says so for a run that did not trip, and fails for an unknown id', async () => {
    const fine = io();
    assert.equal(await runReplayCommand([corpus, '--explain', 'fine'], fine, stub), 0);
    assert.match(fine.stdout.text, /^fine \(line 3\): not tripped in 3 steps$/m);
    const missing = io();
    assert.equal(await runReplayCommand([corpus, '--explain', 'nope'], missing, stub), 1);
    assert.match(missing.stderr.text, /no trajectory with id "nope"/);
  });

  test('secrets in a trajectory do not reach the report or the explanation', async () => {
    const key = 'sk-proj-abcdefghijklmnopqrstuvwx1234';
    const leaky = {
      id: 'leaky',
      steps: [1, 2, 3].flatMap(() => [
        { kind: 'model', prompt_tokens: null, completion_tokens: null, text: `calling with ${key}` },
        { kind: 'tool_call', tool: 'fetch', args: { url: 'https://x.test', apiKey: key }, result: `Bearer ${key}` },
      ]),
    };
    const file = writeFile('leaky.jsonl', JSON.stringify(leaky) + '\n');
    const out = io();
    assert.equal(await runReplayCommand([file, '--html', 'leaky.html', '--json'], out, stub), 0);
    const explain = io();
    assert.equal(await runReplayCommand([file, '--explain', 'leaky'], explain, stub), 0);
    assert.match(explain.stdout.text, /fetch/);
    assert.doesNotMatch(explain.stdout.text, /abcdefghijklmnop/);
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'leaky.html'), 'utf8'), /abcdefghijklmnop/);
  });

  test("the report's position charts add up to the page's figures: a run only steered is no stop", async () => {
    const file = writeFile('steered.jsonl', `${JSON.stringify(looping)}\n${JSON.stringify(productive)}\n`);
    const steered = io();
    assert.equal(await runReplayCommand([file, '--html', 'steered.html'], steered, steerOnly), 0, steered.stderr.text);
    const page = fs.readFileSync(path.join(dir, 'steered.html'), 'utf8');
    assert.equal(card(page, 'would have stopped'), 0);
    assert.equal(card(page, 'with an intervention'), 1);
    assert.equal(chartTotal(page, 'Where runs would have stopped'), 0);
    assert.match(figure(page, 'Where runs would have stopped'), /No run would have stopped/);
    assert.equal(chartTotal(page, 'Where the breaker first intervened'), 1);
    assert.doesNotMatch(page, /Where runs were stopped/);

    const stopped = io();
    assert.equal(await runReplayCommand([corpus, '--html', 'stopped.html'], stopped, stub), 0);
    const stops = fs.readFileSync(path.join(dir, 'stopped.html'), 'utf8');
    assert.equal(card(stops, 'would have stopped'), 1);
    assert.equal(chartTotal(stops, 'Where runs would have stopped'), 1);
    // Stopped at step 6 of 8: in the 70–80% tenth.
    assert.match(figure(stops, 'Where runs would have stopped'), /<title>70–80% of run: 1 run<\/title>/);
    assert.equal(chartTotal(stops, 'Where the breaker first intervened'), card(stops, 'with an intervention'));
  });

  test('token counts that are fractions or overflow are malformed lines, never summed', async () => {
    const file = writeFile(
      'tokens.jsonl',
      [
        '{"id":"frac","steps":[{"kind":"model","prompt_tokens":0.5,"completion_tokens":0.25,"text":""}]}',
        '{"id":"huge","steps":[{"kind":"model","prompt_tokens":1e308,"completion_tokens":null},{"kind":"model","prompt_tokens":1e308,"completion_tokens":null}]}',
        JSON.stringify(looping),
      ].join('\n') + '\n',
    );
    const json = io();
    assert.equal(await runReplayCommand([file, '--json'], json, stub), 0);
    assert.deepEqual(
      json.stdout.text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
      ['loop'],
    );
    assert.match(json.stderr.text, /^line 1: trajectory "frac": steps\[0\]\.prompt_tokens: must be a non-negative whole number .*got 0\.5$/m);
    assert.match(json.stderr.text, /^line 2: trajectory "huge": steps\[0\]\.prompt_tokens: .*got 1e\+308$/m);
    const table = io();
    assert.equal(await runReplayCommand([file], table, stub), 0);
    assert.match(table.stdout.text, /2 malformed lines skipped/);
    assert.match(table.stdout.text, /Tokens that would have been saved \(from each stop\): 45 of 120 /);
    assert.doesNotMatch(table.stdout.text, /∞|e\+|\d{25}/);
  });

  test('ids, tool names and argument names from a trajectory are redacted in every output', async () => {
    const token = 'ghp_R4nd0mT0k3nABCDEFGHIJKLMNOPQRSTUVWXYZab';
    const id = `push https://x:${token}@github.com/o/r`;
    const run = {
      id,
      steps: [1, 2, 3, 4].flatMap(() => [
        { kind: 'model', prompt_tokens: 10, completion_tokens: 1, text: '' },
        { kind: 'tool_call', tool: `push:${token}`, args: { [token]: 'origin' }, result: 'rejected' },
      ]),
    };
    // The same id twice: the duplicate-id warning on stderr quotes it.
    const file = writeFile('secret-id.jsonl', `${JSON.stringify(run)}\n${JSON.stringify(run)}\n`);
    const secret = /R4nd0mT0k3n/;
    const outputs: string[] = [];
    for (const argv of [[file, '--json', '--html', 'secret-id.html'], [file], [file, '--explain', id]]) {
      const out = io();
      assert.equal(await runReplayCommand(argv, out, stub), 0, out.stderr.text);
      outputs.push(out.stdout.text, out.stderr.text);
    }
    const html = fs.readFileSync(path.join(dir, 'secret-id.html'), 'utf8');
    assert.match(html, /<span class="id"><bdi>push https:\/\/x:\[REDACTED\]@github\.com\/o\/r<\/bdi><\/span>/);
    assert.doesNotMatch(html, secret);
    const json = JSON.parse(outputs[0]!.split('\n')[0]!) as { id: string; reason: string };
    assert.equal(json.id, 'push https://x:[REDACTED]@github.com/o/r');
    assert.match(json.reason, /^push:\[REDACTED\] called 3 times$/);
    assert.match(outputs[1]!, /^line 2: duplicate id "push https:\/\/x:\[REDACTED\]@github\.com\/o\/r"/m);
    assert.match(outputs[2]!, /yes\s+tool_spiral\s+5\s+.*push https:\/\/x:\[REDACTED\]@github\.com\/o\/r$/m);
    assert.match(outputs[4]!, /^line 1 {2}push https:\/\/x:\[REDACTED\]@github\.com\/o\/r: stop/m);
    assert.match(outputs[4]!, /args\.\[REDACTED\]: same in all — origin/);
    for (const text of outputs) assert.doesNotMatch(text, secret);
    const fine = io();
    assert.equal(await runReplayCommand([writeFile('secret-fine.jsonl', `${JSON.stringify({ ...productive, id })}\n`), '--explain', id], fine, stub), 0);
    assert.match(fine.stdout.text, /^push https:\/\/x:\[REDACTED\]@github\.com\/o\/r \(line 1\): not tripped/);
    const missing = io();
    assert.equal(await runReplayCommand([file, '--explain', `nope ${token}`], missing, stub), 1);
    assert.doesNotMatch(missing.stderr.text, secret);
  });

  test('--explain finds a run by its id as printed, redacted, and says so when several runs print alike', async () => {
    // The real breaker, with its defaults: the same search six times with the same result.
    const spiral = (id: string) => ({
      id,
      steps: [1, 2, 3, 4, 5, 6].flatMap((i) => [
        { kind: 'model', prompt_tokens: 10 * i, completion_tokens: 5, text: '' },
        { kind: 'tool_call', tool: 'search', args: { q: 'x' }, result: 'none' },
      ]),
    });
    const twin = 'ghp_R4nd0mT0k3nABCDEFGHIJKLMNOPQRSTUVWXY';
    const ids = ['run-sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c', 'deploy postgres://admin:S3cretPw@db.internal/app', `job ${twin}1`, `job ${twin}2`];
    const runs = [spiral(ids[0]!), { ...productive, id: ids[1] }, spiral(ids[2]!), spiral(ids[3]!)];
    const file = writeFile('printed-ids.jsonl', `${runs.map((run) => JSON.stringify(run)).join('\n')}\n`);
    const secret = /Xq9vT3bL|S3cretPw|R4nd0mT0k3n/;
    const table = io();
    assert.equal(await runReplayCommand([file], table), 0, table.stderr.text);
    const printed = table.stdout.text
      .split('\n')
      .slice(1, 5)
      .map((row) => row.split(/ {2,}/).at(-1)!);
    assert.deepEqual(printed, ['run-[REDACTED]', 'deploy postgres://admin:[REDACTED]@db.internal/app', 'job [REDACTED]', 'job [REDACTED]']);

    const tripped = io();
    assert.equal(await runReplayCommand([file, '--explain', printed[0]!], tripped), 0, tripped.stderr.text);
    assert.match(tripped.stdout.text, /^line 1 {2}run-\[REDACTED\]: steer \(tool_spiral\) at step \d+ of 12$/m);
    const fine = io();
    assert.equal(await runReplayCommand([file, '--explain', printed[1]!], fine), 0, fine.stderr.text);
    assert.equal(fine.stdout.text, 'deploy postgres://admin:[REDACTED]@db.internal/app (line 2): not tripped in 3 steps\n');
    // Two ids that differ only in what is redacted: which one is meant cannot be told, and the lines say where to look.
    const alike = io();
    assert.equal(await runReplayCommand([file, '--explain', 'job [REDACTED]'], alike), 1);
    assert.equal(alike.stdout.text, '');
    assert.match(
      alike.stderr.text,
      /^governor replay: 2 trajectories show as "job \[REDACTED\]" \(lines 3, 4\) in printed-ids\.jsonl: give the id as in the file$/m,
    );
    // The id as in the file still finds its run, however it prints.
    const raw = io();
    assert.equal(await runReplayCommand([file, '--explain', ids[3]!], raw), 0, raw.stderr.text);
    assert.match(raw.stdout.text, /^line 4 {2}job \[REDACTED\]: steer/m);
    for (const out of [table, tripped, fine, alike, raw]) assert.doesNotMatch(out.stdout.text + out.stderr.text, secret);
  });

  test('control characters in a recorded run are shown escaped, never sent to the terminal raw', async () => {
    const hostile = '\u001b]0;PWNED\u0007\u001b[2J\u009b31m';
    const run = {
      id: `run${hostile}`,
      steps: [1, 2, 3].flatMap(() => [
        { kind: 'model', prompt_tokens: 10, completion_tokens: 5, text: `say ${hostile}` },
        { kind: 'tool_call', tool: `search${hostile}`, args: { q: hostile }, result: hostile },
      ]),
    };
    const file = writeFile('hostile.jsonl', `${JSON.stringify(run)}\n{"id": "x\u001b[2J", "steps": 7}\n`);
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
    for (const argv of [[file], [file, '--explain', run.id]]) {
      const out = io();
      assert.equal(await runReplayCommand(argv, out, stub), 0);
      assert.doesNotMatch(out.stdout.text + out.stderr.text, raw);
      assert.match(out.stdout.text, /run\\u001b\]0;PWNED\\u0007/);
    }
    const json = io();
    assert.equal(await runReplayCommand([file, '--json'], json, stub), 0);
    assert.doesNotMatch(json.stdout.text + json.stderr.text, raw);
    assert.equal(JSON.parse(json.stdout.text.trim().split('\n')[0]!).id, run.id);
  });

  test('--html naming the file being replayed is refused before anything is written', async () => {
    const content = `${JSON.stringify(looping)}\n`;
    const file = writeFile('same.jsonl', content);
    const out = io();
    assert.equal(await runReplayCommand([file, '--html', 'same.jsonl'], out, stub), 2);
    assert.match(out.stderr.text, /--html same\.jsonl is the file being replayed/);
    assert.equal(fs.readFileSync(file, 'utf8'), content);
  });

  test('an --html that cannot be written, or combined with --explain, is refused before the replay', async () => {
    for (const [argv, problem] of [
      [[corpus, '--html', 'no-such-folder/report.html'], /cannot write --html no-such-folder\/report\.html: the folder no-such-folder does not exist/],
      [[corpus, '--html', '.'], /cannot write --html \.: it is a directory/],
      [[corpus, '--html', '-'], /--html needs a file name/],
      [[corpus, '--explain', 'loop', '--json'], /--explain prints one run as text: leave out --json and --html/],
      [[corpus, '--explain', 'loop', '--html', 'x.html'], /--explain prints one run as text/],
    ] as const) {
      const out = io();
      assert.equal(await runReplayCommand(argv, out, stub), 2, argv.join(' '));
      assert.match(out.stderr.text, problem);
      assert.equal(out.stdout.text, '', 'nothing replayed');
    }
    assert.equal(fs.existsSync(path.join(dir, '-')), false);
  });

  test('--explain reads standard input as the replay does', async () => {
    const out = { ...io(), stdin: Readable.from([`${JSON.stringify(looping)}\n`]) };
    assert.equal(await runReplayCommand(['-', '--explain', 'loop'], out, stub), 0, out.stderr.text);
    assert.match(out.stdout.text, /^line 1 {2}loop/m);
    const missing = { ...io(), stdin: Readable.from([`${JSON.stringify(looping)}\n`]) };
    assert.equal(await runReplayCommand(['-', '--explain', 'nope'], missing, stub), 1);
    assert.match(missing.stderr.text, /no trajectory with id "nope" in standard input/);
  });

  test('a named pipe is read like a file; a directory is a usage error', { skip: process.platform === 'win32' }, async () => {
    const fifo = path.join(dir, 'runs.fifo');
    execFileSync('mkfifo', [fifo]);
    const writer = fs.promises.writeFile(fifo, `${JSON.stringify(looping)}\n`);
    const out = io();
    const code = await runReplayCommand([fifo, '--json'], out, stub);
    // A refused pipe has no reader: give the writer one, so that a failure does not hang the test.
    if (code !== 0) fs.createReadStream(fifo).resume();
    await writer;
    assert.equal(code, 0, out.stderr.text);
    assert.equal(JSON.parse(out.stdout.text.trim()).id, 'loop');
    const folder = io();
    assert.equal(await runReplayCommand([dir], folder, stub), 2);
    assert.match(folder.stderr.text, /it is a directory/);
  });

  test('the real breaker with its defaults replays a file', async () => {
    const out = io();
    const code = await runReplayCommand([corpus, '--json'], out);
    assert.equal(code, 0);
    const lines = out.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; steps_total: number });
    assert.deepEqual(
      lines.map((l) => [l.id, l.steps_total]),
      [
        ['loop', 8],
        ['fine', 3],
      ],
    );
  });
});

test('stops quietly with exit 0 when the reader of the output goes away (EPIPE)', async () => {
  const { EventEmitter } = await import('node:events');
  class ClosingPipe extends EventEmitter {
    writes = 0;
    write(_chunk: string): boolean {
      this.writes++;
      if (this.writes === 1) {
        const error = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
        queueMicrotask(() => this.emit('error', error));
      }
      return true;
    }
  }
  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ ...productive, id: `p${i}` })).join('\n');
  const file = writeFile('fifty.jsonl', lines + '\n');
  const stdout = new ClosingPipe();
  const stderr = new Capture();
  const code = await runReplayCommand([file, '--json'], { stdout, stderr, cwd: dir }, stub);
  assert.equal(code, 0);
  assert.ok(stdout.writes < 50, `expected the replay to stop writing, it wrote ${stdout.writes} lines`);
  assert.equal(stderr.text, '');
  assert.equal(stdout.listenerCount('error'), 0);
});

test("each run's breaker and its store go when the run is replayed: a file of many runs holds none of them", async () => {
  const runs = Array.from({ length: 300 }, (_, i) => JSON.stringify({ ...productive, id: `m${i}` }));
  const file = writeFile('many.jsonl', `${runs.join('\n')}\n`);
  assert.equal(await runReplayCommand([file, '--json'], io()), 0);
  // Counted after a full collection: a store kept for its idle timer would still be here. (Without the
  // warning that the call is experimental: it is the only way to count live objects.)
  const warn = process.emitWarning;
  process.emitWarning = () => {};
  try {
    assert.ok(v8.queryObjects(InMemoryBreakerStore, { format: 'count' }) < 5);
  } finally {
    process.emitWarning = warn;
  }
});

test('control characters a run holds (a terminal escape sequence) are written as visible escapes in the --html report too', async () => {
  const hostile = { ...looping, id: 'esc-\u001b]0;PWNED\u0007\u001b[2J' };
  const file = writeFile('escapes.jsonl', `${JSON.stringify(hostile)}\n`);
  const report = path.join(dir, 'escapes.html');
  assert.equal(await runReplayCommand([file, '--html', report], io()), 0);
  const html = fs.readFileSync(report, 'utf8');
  // Nothing a terminal would act on if the report were printed (newline and tab are text).
  assert.doesNotMatch(html, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  assert.match(html, /esc-\\u001b\]0;PWNED\\u0007\\u001b\[2J/);
});

describe('governor replay: a reader of stderr that goes away (`2>&1 | head`)', () => {
  const piped = (args: string) =>
    spawnSync('/bin/bash', ['-c', `"$0" "$1" replay ${args} 2>&1 | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"`, process.execPath, BIN], {
      encoding: 'utf8',
      cwd: dir,
    });

  test('the replay runs to the end: the --html report is written and the exit code is its own', () => {
    // Warnings and a malformed last line go to stderr after the reader has left.
    const runs = Array.from({ length: 200 }, (_, i) => JSON.stringify({ ...productive, id: `p${i}` }));
    writeFile('piped.jsonl', `${[...runs, ...runs].join('\n')}\n{"id": "cut`);
    const report = path.join(dir, 'piped.html');
    fs.rmSync(report, { force: true });
    assert.equal(piped(`piped.jsonl --html ${report}`).stdout.trim(), '0');
    assert.match(fs.readFileSync(report, 'utf8'), /<html/);
  });

  test('a file with no trajectory still exits 1', () => {
    writeFile('junk.jsonl', Array.from({ length: 100 }, (_, i) => `not json ${i}`).join('\n'));
    assert.equal(piped('junk.jsonl').stdout.trim(), '1');
  });
});

/** A stdout whose reader goes away after the first write, as `| head -1` does. */
class ClosingPipe extends EventEmitter {
  writes = 0;
  write(_chunk: string): boolean {
    this.writes++;
    if (this.writes === 1) queueMicrotask(() => this.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })));
    return true;
  }
}

describe('governor replay: the --html report never costs the input or the previous report', () => {
  const content = `${JSON.stringify(looping)}\n`;

  test('--html naming the input through a symlink or a hard link, either way round, is refused before anything is written', async () => {
    const cases: Array<[string, () => readonly string[]]> = [
      [
        'a symlink to the input',
        () => {
          const input = writeFile('by-symlink.jsonl', content);
          fs.symlinkSync('by-symlink.jsonl', path.join(dir, 'by-symlink.html'));
          return [input, '--html', 'by-symlink.html'];
        },
      ],
      [
        'a hard link to the input',
        () => {
          const input = writeFile('by-hardlink.jsonl', content);
          fs.linkSync(input, path.join(dir, 'by-hardlink.html'));
          return [input, '--html', 'by-hardlink.html'];
        },
      ],
      [
        'the input named through a symlink, the report as the file itself',
        () => {
          writeFile('target.jsonl', content);
          fs.symlinkSync('target.jsonl', path.join(dir, 'link-to-target.jsonl'));
          return ['link-to-target.jsonl', '--html', 'target.jsonl'];
        },
      ],
    ];
    for (const [name, setUp] of cases) {
      const argv = setUp();
      const out = io();
      assert.equal(await runReplayCommand(argv, out, stub), 2, name);
      assert.match(out.stderr.text, /--html \S+ is the file being replayed/, name);
      assert.equal(out.stdout.text, '', name);
    }
    for (const name of ['by-symlink.jsonl', 'by-hardlink.jsonl', 'target.jsonl']) assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), content, name);
  });

  test('--html naming the file standard input is redirected from is refused', async () => {
    const input = writeFile('redirected.jsonl', content);
    const fd = fs.openSync(input, 'r');
    const stdin = fs.createReadStream('', { fd });
    try {
      const out = { ...io(), stdin };
      assert.equal(await runReplayCommand(['-', '--html', 'redirected.jsonl'], out, stub), 2);
      assert.match(out.stderr.text, /--html redirected\.jsonl is the file being replayed \(standard input\)/);
    } finally {
      stdin.destroy();
    }
    assert.equal(fs.readFileSync(input, 'utf8'), content);
  });

  test('a report that cannot be written in full (disk full) leaves the previous report whole and no temporary file', {
    skip: process.platform === 'win32',
  }, () => {
    const folder = fs.mkdtempSync(path.join(dir, 'full-'));
    const input = path.join(folder, 'runs.jsonl');
    fs.writeFileSync(input, `${JSON.stringify(looping)}\n${JSON.stringify(productive)}\n`);
    const report = path.join(folder, 'report.html');
    fs.writeFileSync(report, 'OLD REPORT\n');
    // A file size limit of 4 KiB makes the write fail part way (EFBIG), as a full disk does (ENOSPC); the report is larger.
    const result = spawnSync('/bin/sh', ['-c', 'ulimit -f 8 && exec "$@"', 'sh', process.execPath, BIN, 'replay', input, '--html', report], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /governor replay: cannot write --html .*report\.html: .*(EFBIG|too large)/);
    assert.equal(fs.readFileSync(report, 'utf8'), 'OLD REPORT\n');
    assert.deepEqual(fs.readdirSync(folder).sort(), ['report.html', 'runs.jsonl']);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`${signal} while the report is being written leaves the previous report whole and no temporary file`, {
      skip: process.platform === 'win32',
    }, async () => {
      const folder = fs.mkdtempSync(path.join(dir, 'signal-'));
      const input = path.join(folder, 'runs.jsonl');
      fs.writeFileSync(input, `${JSON.stringify(looping)}\n`);
      const report = path.join(folder, 'report.html');
      fs.writeFileSync(report, 'OLD REPORT\n');
      // A slow disk: the report's first half is written, then the write stalls, and the test interrupts it there.
      const slowDisk = path.join(dir, `slow-disk-${signal}.mjs`);
      fs.writeFileSync(
        slowDisk,
        `import fs from 'node:fs/promises';
const writeFile = fs.writeFile;
fs.writeFile = async (file, data, options) => {
  if (typeof data !== 'string' || !data.startsWith('<!doctype html>')) return writeFile(file, data, options);
  await writeFile(file, data.slice(0, data.length / 2), options);
  process.stderr.write('STALLED\\n');
  await new Promise((resolve) => setTimeout(resolve, 30_000));
  await fs.appendFile(file, data.slice(data.length / 2));
};
`,
      );
      const child = spawn(process.execPath, ['--import', pathToFileURL(slowDisk).href, BIN, 'replay', input, '--html', report], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      // Listened to at once: a child that dies early must not be waited for forever.
      const closed = once(child, 'close');
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      while (!stderr.includes('STALLED') && child.exitCode === null && child.signalCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill(signal);
      const [code, killedBy] = (await closed) as [number | null, NodeJS.Signals | null];
      // replay has no signal handling of its own: it still dies of the signal, as the shell expects.
      assert.equal(killedBy, signal, `exit code ${code}: ${stderr}`);
      assert.equal(fs.readFileSync(report, 'utf8'), 'OLD REPORT\n');
      assert.deepEqual(fs.readdirSync(folder).sort(), ['report.html', 'runs.jsonl']);
    });
  }

  test('a report through a symlink is written to the file it names, and the link stays a link', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'linked-'));
    fs.writeFileSync(path.join(folder, 'real.html'), 'OLD REPORT\n', { mode: 0o640 });
    fs.chmodSync(path.join(folder, 'real.html'), 0o640);
    fs.symlinkSync('real.html', path.join(folder, 'latest.html'));
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--html', path.join(folder, 'latest.html')], out, stub), 0, out.stderr.text);
    assert.ok(fs.lstatSync(path.join(folder, 'latest.html')).isSymbolicLink());
    assert.match(fs.readFileSync(path.join(folder, 'real.html'), 'utf8'), /^<!doctype html>/);
    assert.equal(fs.statSync(path.join(folder, 'real.html')).mode & 0o777, 0o640, 'the permissions of the report replaced are kept');
    assert.deepEqual(fs.readdirSync(folder).sort(), ['latest.html', 'real.html']);
  });

  test('a report through a symlink whose file does not exist yet creates that file, and the link stays a link', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'dangling-'));
    fs.mkdirSync(path.join(folder, 'site'));
    // Two hops: latest.html -> current.html -> site/report.html, none of them there yet.
    fs.symlinkSync('site/report.html', path.join(folder, 'current.html'));
    fs.symlinkSync('current.html', path.join(folder, 'latest.html'));
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--html', path.join(folder, 'latest.html')], out, stub), 0, out.stderr.text);
    assert.ok(fs.lstatSync(path.join(folder, 'latest.html')).isSymbolicLink());
    assert.ok(fs.lstatSync(path.join(folder, 'current.html')).isSymbolicLink());
    assert.match(fs.readFileSync(path.join(folder, 'site', 'report.html'), 'utf8'), /^<!doctype html>/);
  });

  test('a report through a link into a folder that does not exist is refused naming that folder; the link stays', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'link-nowhere-'));
    fs.mkdirSync(path.join(folder, 'deep'));
    fs.symlinkSync('../site-not-created-yet/report.html', path.join(folder, 'deep', 'latest.html'));
    const out = io();
    assert.equal(await runReplayCommand([corpus, '--html', path.join(folder, 'deep', 'latest.html')], out, stub), 2);
    assert.match(out.stderr.text, new RegExp(`the folder ${path.join(folder, 'site-not-created-yet').replaceAll('/', '\\/')} does not exist`));
    assert.ok(fs.lstatSync(path.join(folder, 'deep', 'latest.html')).isSymbolicLink());
  });

  test('when the reader of stdout goes away (| head), the replay goes on and still writes the --html report; exit 0', async () => {
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ ...looping, id: `l${i}` })).join('\n');
    const file = writeFile('fifty-loops.jsonl', lines + '\n');
    for (const json of [false, true]) {
      const report = path.join(dir, `piped-${json}.html`);
      const stdout = new ClosingPipe();
      const stderr = new Capture();
      const code = await runReplayCommand([file, '--html', report, ...(json ? ['--json'] : [])], { stdout, stderr, cwd: dir }, stub);
      assert.equal(code, 0, stderr.text);
      assert.ok(stdout.writes < 5, `stdout was written to after it closed: ${stdout.writes} writes`);
      assert.equal(card(fs.readFileSync(report, 'utf8'), 'would have stopped'), 50, 'the report covers the whole file');
      assert.match(stderr.text, /HTML report written to/);
      assert.equal(stdout.listenerCount('error'), 0);
    }
  });
});

describe('governor replay: what it says on stderr stays short', () => {
  test('a file concatenated with itself warns about the first 20 duplicate ids, then says how many more; every line is still replayed', async () => {
    const once = [JSON.stringify(looping), JSON.stringify(productive)];
    const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify({ ...productive, id: `run-${i}` }));
    const twice = writeFile('twice.jsonl', `${[...once, ...lines, ...once, ...lines].join('\n')}\n`);
    const out = io();
    assert.equal(await runReplayCommand([twice, '--json'], out, stub), 0);
    const warnings = out.stderr.text.trimEnd().split('\n');
    assert.equal(warnings.filter((line) => /^line \d+: duplicate id/.test(line)).length, 20);
    assert.equal(warnings.at(-1), '… and 12 more warnings, not shown');
    assert.equal(out.stdout.text.trimEnd().split('\n').length, 64);
  });

  test('reading standard input from a terminal says so, and how to end it; from a pipe it says nothing', async () => {
    const terminal = Object.assign(Readable.from([`${JSON.stringify(productive)}\n`]), { isTTY: true });
    const typed = { ...io(), stdin: terminal };
    assert.equal(await runReplayCommand(['-', '--json'], typed, stub), 0);
    assert.match(typed.stderr.text, /^governor replay: reading trajectories \(JSON Lines\) from standard input; end with Ctrl-D\n/);
    const piped = { ...io(), stdin: Readable.from([`${JSON.stringify(productive)}\n`]) };
    assert.equal(await runReplayCommand(['-', '--json'], piped, stub), 0);
    assert.equal(piped.stderr.text, '');
  });
});

describe('governor replay: an input with no usable trajectory', () => {
  test('a gzip-compressed file is refused at its first bytes with exit 1, saying to decompress it; nothing on stdout', async () => {
    const file = path.join(dir, 'runs.jsonl.gz');
    fs.writeFileSync(file, gzipSync(Buffer.from(`${JSON.stringify(looping)}\n${JSON.stringify(productive)}\n`.repeat(50))));
    for (const json of [false, true]) {
      const out = io();
      assert.equal(await runReplayCommand([file, ...(json ? ['--json'] : [])], out, stub), 1);
      assert.equal(out.stdout.text, '');
      assert.equal(
        out.stderr.text,
        `governor replay: no trajectory in ${file}: it is gzip-compressed; decompress it first (zcat ${file} | governor replay -)\n`,
      );
    }
    // From a pipe too, where there is no file name to go by.
    const piped = { ...io(), stdin: Readable.from([fs.readFileSync(file)]) };
    assert.equal(await runReplayCommand(['-'], piped, stub), 1);
    assert.match(piped.stderr.text, /^governor replay: no trajectory in standard input: it is gzip-compressed; decompress it first/);
    const explained = io();
    assert.equal(await runReplayCommand([file, '--explain', 'loop'], explained, stub), 1);
    assert.match(explained.stderr.text, /it is gzip-compressed/);
  });

  test('a file of which no line is a trajectory exits 1 and shows only the first 20 line errors; no report replaces the previous one', async () => {
    const prettyPrinted = writeFile('pretty.json', `${JSON.stringify([looping, productive], null, 2)}\n`);
    const lineCount = fs.readFileSync(prettyPrinted, 'utf8').trim().split('\n').length;
    assert.ok(lineCount > 40);
    fs.writeFileSync(path.join(dir, 'kept.html'), 'OLD REPORT\n');
    const out = io();
    assert.equal(await runReplayCommand([prettyPrinted, '--html', 'kept.html'], out, stub), 1);
    const stderr = out.stderr.text.trimEnd().split('\n');
    assert.equal(stderr.filter((line) => /^line \d+: /.test(line)).length, 20);
    assert.match(stderr.at(-2)!, new RegExp(`^… and ${lineCount - 20} more malformed lines, not shown$`));
    assert.equal(
      stderr.at(-1),
      `governor replay: no trajectory in ${prettyPrinted}: all ${lineCount} lines are malformed (expected JSON Lines: one trajectory object per line)`,
    );
    assert.equal(out.stdout.text, '');
    assert.equal(fs.readFileSync(path.join(dir, 'kept.html'), 'utf8'), 'OLD REPORT\n');
  });

  test('a file with good lines among many bad ones still exits 0, with the line errors capped', async () => {
    const bad = Array.from({ length: 30 }, (_, i) => `{not json ${i}`);
    const file = writeFile('mostly-bad.jsonl', [...bad, JSON.stringify(productive)].join('\n') + '\n');
    const out = io();
    assert.equal(await runReplayCommand([file], out, stub), 0);
    assert.equal((out.stderr.text.match(/^line \d+: invalid JSON/gm) ?? []).length, 20);
    assert.match(out.stderr.text, /^… and 10 more malformed lines, not shown$/m);
    assert.match(out.stdout.text, /Trajectories: 1 replayed, 0 tripped \(0\.0%\), 30 malformed lines skipped/);
  });

  test('an empty file replays nothing and exits 0 (said in the help)', async () => {
    const out = io();
    assert.equal(await runReplayCommand([writeFile('empty.jsonl', '\n\n')], out, stub), 0, out.stderr.text);
    assert.match(out.stdout.text, /Trajectories: 0 replayed/);
    assert.equal(out.stderr.text, '');
    const help = io();
    await runReplayCommand(['--help'], help, stub);
    assert.match(help.stdout.text, /An empty file replays nothing and exits 0/);
  });
});

test('a file it may not read is a usage error before anything is printed, like a missing file (exit 2)', { skip: process.platform === 'win32' }, () => {
  const folder = fs.mkdtempSync(path.join(dir, 'unreadable-'));
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(folder, 0o755);
  const file = path.join(folder, 'runs.jsonl');
  fs.writeFileSync(file, `${JSON.stringify(looping)}\n`);
  fs.chmodSync(file, 0o000);
  // root reads any file: run the command as nobody there.
  const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const result = spawnSync(process.execPath, [BIN, 'replay', file], { encoding: 'utf8', ...asNobody });
  assert.equal(result.status, 2, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^governor replay: cannot read .*runs\.jsonl: permission denied$/m);
});

test('on a terminal, a slow replay shows progress by time too (after 2 s, then at most every second); never off a terminal', async () => {
  const lines = Array.from({ length: 6 }, (_, i) => JSON.stringify({ ...productive, id: `slow${i}` })).join('\n');
  const file = writeFile('slow.jsonl', lines + '\n');
  // Each reading of the clock is 700 ms later: trajectory 3 (2.1 s) is the first due, then 5 (3.5 s); 4 and 6 are too soon after.
  const clock = (): (() => number) => {
    let now = 0;
    return () => (now += 700) - 700;
  };
  const tty = io({ tty: true });
  assert.equal(await runReplayCommand([file, '--json'], tty, { ...stub, progressEvery: 1000, now: clock() }), 0);
  assert.deepEqual(tty.stderr.text.trimEnd().split('\n'), ['replay: 3 trajectories replayed…', 'replay: 5 trajectories replayed…']);
  const pipe = io();
  assert.equal(await runReplayCommand([file, '--json'], pipe, { ...stub, progressEvery: 1000, now: clock() }), 0);
  assert.equal(pipe.stderr.text, '');
});

/** `governor replay ARGS` as a user runs it, in the test folder. */
function cli(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, 'replay', ...args], { encoding: 'utf8', cwd: dir });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same grep three times (a tool spiral the breaker steers), then a deploy failing seven times (an error loop it steers, blocks, then stops). */
const mixed = {
  id: 'mixed',
  steps: [
    { kind: 'user', text: 'deploy the app' },
    ...[1, 2, 3].flatMap(() => [
      { kind: 'model', prompt_tokens: 500, completion_tokens: 10, text: 'checking' },
      { kind: 'tool_call', tool: 'grep', args: { pattern: 'PORT' }, result: 'PORT=8080' },
    ]),
    ...[1, 2, 3, 4, 5, 6, 7].flatMap(() => [
      { kind: 'model', prompt_tokens: 600, completion_tokens: 10, text: 'deploying' },
      { kind: 'tool_call', tool: 'deploy', args: { env: 'prod' }, result: 'Error: permission denied for role deployer', error: true },
    ]),
  ],
};

/** One run's drill-down in a report. */
function runOf(html: string, id: string): string {
  const start = html.indexOf(`<span class="id"><bdi>${id}</bdi></span>`);
  assert.notEqual(start, -1, `no run "${id}" in the report`);
  return html.slice(start, html.indexOf('</details>', start));
}

describe('governor replay: every intervention of a run, where it happened, and what its stop saved', () => {
  test('--explain and the report show each intervention in order with its evidence and message, mark its step, and mark left-out steps', async () => {
    writeFile('mixed.jsonl', `${JSON.stringify(mixed)}\n`);
    const explained = cli(['mixed.jsonl', '--explain', 'mixed']);
    assert.equal(explained.status, 0, explained.stderr);
    const text = explained.stdout;
    assert.match(text, /^line 1 {2}mixed: steer \(tool_spiral\) at step 6 of 21$/m);
    assert.match(text, /^Stopped at step 16 \(error_loop\); saved: 5 steps, 1,220 tokens$/m);
    assert.deepEqual(
      [...text.matchAll(/^Intervention (\d) of 4: (\w+) \((\w+)\) at step (\d+)$/gm)].map((m) => m.slice(1).join(' ')),
      ['1 steer tool_spiral 6', '2 steer error_loop 12', '3 block error_loop 14', '4 stop error_loop 16'],
    );
    // Each with its own reason, message and evidence: the error loop's are about deploy, not grep.
    const sections = text.split(/^Intervention \d of 4: /m).slice(1);
    for (const [i, section] of sections.entries()) {
      const tool = i === 0 ? 'grep' : 'deploy';
      assert.match(section, new RegExp(`^ {2}${tool} (called|failed) \\d times`, 'm'), `intervention ${i + 1}`);
      assert.match(section, new RegExp(`^ {2}Message to the model: .*\\b${tool}\\b`, 'm'), `intervention ${i + 1}`);
      assert.match(section, new RegExp(`^ {4}\\s*"tool": "${tool}",$`, 'm'), `intervention ${i + 1}`);
    }
    assert.match(text, /^>> {2}6 tool_call {2}grep/m);
    assert.match(text, /^>> 12 tool_call {2}deploy/m);
    assert.match(text, /^>> 14 tool_call {2}deploy/m);
    assert.match(text, /^XX 16 tool_call {2}deploy/m);
    // Steps 8 and 9 between the spiral and the error loop, and 18 to 20 after the stop, are left out, and it says so.
    assert.match(text, /^ {4}7 model .*\n {6}… 2 steps …\n {3}10 tool_call/m);
    assert.match(text, /^ x 17 model .*\n {6}… 3 steps …$/m);

    const out = io();
    assert.equal(await runReplayCommand(['mixed.jsonl', '--html', 'mixed.html'], out), 0, out.stderr.text);
    const run = runOf(fs.readFileSync(path.join(dir, 'mixed.html'), 'utf8'), 'mixed');
    assert.deepEqual(
      [...run.matchAll(/<h4>Intervention (\d) of 4: (\w+) \((\w+)\) at step (\d+)<\/h4>/g)].map((m) => m.slice(1).join(' ')),
      ['1 steer tool_spiral 6', '2 steer error_loop 12', '3 block error_loop 14', '4 stop error_loop 16'],
    );
    assert.equal((run.match(/<b>Message to the model:<\/b>/g) ?? []).length, 4);
    assert.deepEqual(
      [...run.matchAll(/<tr class="role-(trip|intervention|stop)"><td>(\d+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`),
      ['trip 6', 'intervention 12', 'intervention 14', 'stop 16'],
    );
    assert.match(run, /<td>7<\/td>.*?<\/tr><tr class="gap"><td colspan="5">… 2 steps …<\/td><\/tr><tr class="role-before"><td>10<\/td>/);
    assert.match(run, /<tr class="gap"><td colspan="5">… 3 steps …<\/td><\/tr><\/tbody>/);
  });

  test('steps saved are credited to the category of the stop, runs to the category of the first intervention, and the summary says which is which', async () => {
    writeFile('mixed-summary.jsonl', `${JSON.stringify(mixed)}\n`);
    const table = cli(['mixed-summary.jsonl', '--html', 'mixed-summary.html']);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^Trips by category \(runs counted by their first intervention, steps saved by their stop\):$/m);
    assert.match(table.stdout, /^ {2}tool_spiral\s+1\s+0 steps saved$/m);
    assert.match(table.stdout, /^ {2}error_loop\s+0\s+5 steps saved$/m);
    const html = fs.readFileSync(path.join(dir, 'mixed-summary.html'), 'utf8');
    assert.match(figure(html, 'Steps saved by category (of the stop)'), /<title>error_loop: 5 steps<\/title>/);
    assert.match(figure(html, 'Steps saved by category'), /<title>tool_spiral: 0 steps<\/title>/);
    assert.match(figure(html, 'Trips by category (of the first intervention)'), /<title>tool_spiral: 1 trip<\/title>/);
  });

  test('a run with many interventions shows the first ones and the last, and how many are left out', async () => {
    const run = {
      id: 'steered-often',
      steps: Array.from({ length: 30 }, (_, i) => ({ kind: 'tool_call', tool: 'poll', args: { n: i }, result: 'pending' })),
    };
    writeFile('often.jsonl', `${JSON.stringify(run)}\n`);
    const out = io();
    assert.equal(await runReplayCommand(['often.jsonl', '--explain', 'steered-often'], out, steerEveryCall), 0, out.stderr.text);
    const text = out.stdout.text;
    assert.deepEqual(
      [...text.matchAll(/^Intervention (\d+) of 30: steer \(tool_spiral\) at step (\d+)$/gm)].map((m) => `${m[1]}@${m[2]}`),
      ['1@0', '2@1', '3@2', '4@3', '30@29'],
    );
    assert.match(text, /^… 25 more interventions, not shown …$/m);
    // Every intervention's step is marked, shown or not in detail.
    for (const row of text.match(/^.. +\d+ tool_call .*$/gm) ?? []) assert.match(row, /^>>/, row);
    // 30 interventions in full would be over 200 lines.
    assert.ok(text.split('\n').length < 100, `${text.split('\n').length} lines`);
  });

  test('a decision taken on seeing a step is said to come after that step, which is the step marked, in every human output; --json keeps its numbering', async () => {
    const rag = {
      id: 'rag',
      steps: [1, 2, 3, 4].flatMap((n) => [
        { kind: 'model', prompt_tokens: null, completion_tokens: null, text: `look ${n}` },
        { kind: 'retrieval', query: 'capital of Atlantis', results: [] },
      ]),
    };
    writeFile('rag.jsonl', `${JSON.stringify(rag)}\n`);
    const explained = io();
    assert.equal(await runReplayCommand(['rag.jsonl', '--explain', 'rag'], explained, steerThirdRetrieval), 0, explained.stderr.text);
    assert.match(explained.stdout.text, /^line 1 {2}rag: steer \(rag_fixation\) after step 5 of 8$/m);
    assert.match(explained.stdout.text, /^>> 5 retrieval {2}capital of Atlantis$/m);
    assert.doesNotMatch(explained.stdout.text, /^>> 6/m);
    const table = io();
    assert.equal(await runReplayCommand(['rag.jsonl', '--html', 'rag.html'], table, steerThirdRetrieval), 0, table.stderr.text);
    assert.match(table.stdout.text, /^8\s+yes\s+rag_fixation\s+after 5\s+none \(steered only\)\s+rag$/m);
    const run = runOf(fs.readFileSync(path.join(dir, 'rag.html'), 'utf8'), 'rag');
    assert.match(run, /<span class="at">after step 5 \/ 8<\/span>/);
    assert.match(run, /<h4>Intervention 1 of 1: steer \(rag_fixation\) after step 5<\/h4>/);
    assert.match(run, /<tr class="role-trip"><td>5<\/td><td>retrieval<\/td>/);
    const json = io();
    assert.equal(await runReplayCommand(['rag.jsonl', '--json'], json, steerThirdRetrieval), 0);
    assert.equal(JSON.parse(json.stdout.text).step, 6);
  });
});

/** Steers every tool call. */
const steerEveryCall = {
  createBreaker: (): ReplayableBreaker => ({
    checkModelCall: async () => ({ action: 'allow' }),
    checkToolCall: async () => ({ action: 'steer', category: 'tool_spiral', message: 'poll less', evidence: { detail: 'polled again' } }),
    observe: async () => ({ action: 'allow' }),
  }),
};

/** Steers on seeing the third retrieval, as a RAG fixation detector does. */
const steerThirdRetrieval = {
  createBreaker: (): ReplayableBreaker => {
    let retrievals = 0;
    return {
      checkModelCall: async () => ({ action: 'allow' }),
      checkToolCall: async () => ({ action: 'allow' }),
      observe: async (_s, event) =>
        event.kind === 'retrieval' && ++retrievals === 3 ? { action: 'steer', category: 'rag_fixation', message: 'search less' } : { action: 'allow' },
    };
  },
};

describe('governor replay: what a run holds cannot disguise itself or cost the replay', () => {
  test('bidirectional-text controls in a recorded run are shown escaped in the table and in --explain, never raw', () => {
    const run = {
      id: 'run-\u202elmth.exe',
      steps: [1, 2, 3, 4].flatMap(() => [
        { kind: 'model', prompt_tokens: 10, completion_tokens: 1, text: 'again \u2067' },
        { kind: 'tool_call', tool: 'rm\u202e', args: { path: 'a\u202d' }, result: 'ok\u200f' },
      ]),
    };
    writeFile('bidi.jsonl', `${JSON.stringify(run)}\n`);
    const bidi = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
    const table = cli(['bidi.jsonl']);
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /\s+run-\\u202elmth\.exe$/m);
    const explained = cli(['bidi.jsonl', '--explain', run.id]);
    assert.equal(explained.status, 0, explained.stderr);
    assert.match(explained.stdout, /^line 1 {2}run-\\u202elmth\.exe: /m);
    assert.match(explained.stdout, /rm\\u202e\(\{"path":"a\\u202d"\}\)/);
    for (const text of [table.stdout, table.stderr, explained.stdout, explained.stderr]) assert.doesNotMatch(text, bidi);
  });

  test('a label replay cannot read (a word, as teams write) is ignored with one warning naming the line; the run is replayed', () => {
    writeFile(
      'team-labels.jsonl',
      [
        '{"id":"team-run-1","label":"looping","outcome":"failed","steps":[{"kind":"user","text":"hi"}]}',
        '{"id":"team-run-2","label":{"stuck":true,"category":"tool_spiral"},"steps":[]}',
      ].join('\n') + '\n',
    );
    const replayed = cli(['team-labels.jsonl', '--json']);
    assert.equal(replayed.status, 0, replayed.stderr);
    assert.deepEqual(
      replayed.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
      ['team-run-1', 'team-run-2'],
    );
    assert.equal(
      replayed.stderr,
      'line 1: trajectory "team-run-1": label: must be an object like {"stuck": true, "category": "tool_spiral", "first_stuck_step": 4}, got a string; the label is ignored\n',
    );
  });

  test('--explain ID not found says why: the malformed lines, one of which may have been the run, or that no line is a trajectory', () => {
    writeFile(
      'explain-bad.jsonl',
      [JSON.stringify(productive), '{"id": "wrongtype", "steps": [{"kind": "model", "prompt_tokens": "1200"}]}', '{"id":"broken", "steps": ['].join('\n') +
        '\n',
    );
    const missing = cli(['explain-bad.jsonl', '--explain', 'wrongtype']);
    assert.equal(missing.status, 1);
    assert.equal(missing.stdout, '');
    assert.deepEqual(missing.stderr.trimEnd().split('\n'), [
      'line 2: trajectory "wrongtype": steps[0].prompt_tokens: must be a non-negative whole number (at most 9007199254740991) or null, got string',
      'line 3: invalid JSON: Unexpected end of JSON input',
      'governor replay: no trajectory with id "wrongtype" in explain-bad.jsonl (2 malformed lines skipped, see above)',
    ]);
    // Found, the run is explained and the file's other lines are none of its business.
    const found = cli(['explain-bad.jsonl', '--explain', 'fine']);
    assert.equal(found.status, 0, found.stderr);
    assert.equal(found.stderr, '');

    // 30 lines of 99 bytes of no text.
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i % 100 === 99 ? 0x0a : ((i * 131 + 7) % 251) | 0x80)));
    fs.writeFileSync(path.join(dir, 'binary.bin'), bytes);
    const binary = cli(['binary.bin', '--explain', 'x']);
    assert.equal(binary.status, 1);
    assert.match(binary.stderr, /^… and 10 more malformed lines, not shown$/m);
    assert.match(
      binary.stderr,
      /^governor replay: no trajectory in binary\.bin: all 30 lines are malformed \(expected JSON Lines: one trajectory object per line\)$/m,
    );
    assert.doesNotMatch(binary.stderr, /no trajectory with id/);
  });
});

describe('governor replay: --html and --config are refused before the replay when they cannot work', () => {
  test('an --html in a folder that takes no new file (/proc, even for root) is refused with exit 2 before anything is replayed', {
    skip: process.platform !== 'linux' || !fs.existsSync('/proc/self'),
  }, () => {
    const result = cli([corpus, '--html', '/proc/governor-replay-report.html']);
    assert.equal(result.status, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^governor replay: cannot write --html \/proc\/governor-replay-report\.html: (no file can be created in \/proc|permission denied)$/m,
    );
  });

  test('the temporary file of the report exists from before the replay and is removed when the replay is interrupted', {
    skip: process.platform === 'win32',
  }, async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'interrupted-'));
    fs.writeFileSync(path.join(folder, 'report.html'), 'OLD REPORT\n');
    // Reads standard input, which stays open: the replay is under way until the signal.
    const child = spawn(process.execPath, [BIN, 'replay', '-', '--html', path.join(folder, 'report.html')], { stdio: ['pipe', 'ignore', 'pipe'] });
    const closed = once(child, 'close');
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.write(`${JSON.stringify(looping)}\n`);
    const temporary = (): string[] => fs.readdirSync(folder).filter((name) => name.endsWith('.tmp'));
    try {
      for (let waited = 0; temporary().length === 0 && child.exitCode === null && waited < 10_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(temporary().length, 1, `no temporary file beside the report while the replay runs: ${stderr}`);
    } finally {
      // Interrupted either way: a child left waiting on its input would hold the test run open.
      child.kill('SIGINT');
    }
    const [, killedBy] = (await closed) as [number | null, NodeJS.Signals | null];
    assert.equal(killedBy, 'SIGINT', stderr);
    assert.deepEqual(fs.readdirSync(folder), ['report.html']);
    assert.equal(fs.readFileSync(path.join(folder, 'report.html'), 'utf8'), 'OLD REPORT\n');
  });

  test('a replay that ends without a report (no line is a trajectory) leaves no temporary file', async () => {
    const folder = fs.mkdtempSync(path.join(dir, 'no-report-'));
    fs.writeFileSync(path.join(folder, 'runs.jsonl'), '{not json\n[1, 2]\n');
    const out = io();
    assert.equal(await runReplayCommand([path.join(folder, 'runs.jsonl'), '--html', path.join(folder, 'report.html')], out, stub), 1);
    assert.deepEqual(fs.readdirSync(folder), ['runs.jsonl']);
  });

  test('--config: "store" and "now" cannot be set in a JSON file, and the known options do not list them', async () => {
    for (const key of ['store', 'now']) {
      const out = io();
      assert.equal(await runReplayCommand([corpus, '--config', writeFile(`code-only-${key}.json`, `{"${key}": "x"}`)], out), 2);
      assert.match(out.stderr.text, new RegExp(`^governor replay: --config \\S+code-only-${key}\\.json: "${key}" cannot be set in a JSON file: `, 'm'));
      assert.equal(out.stdout.text, '');
    }
    const unknown = io();
    assert.equal(await runReplayCommand([corpus, '--config', writeFile('unknown-option.json', '{"toolSpirals": {}}')], unknown), 2);
    const known = /\(known: ([^)]*)\)/.exec(unknown.stderr.text)?.[1]?.split(', ') ?? [];
    assert.ok(known.includes('toolSpiral'), unknown.stderr.text);
    assert.ok(!known.includes('store') && !known.includes('now'), unknown.stderr.text);
  });
});
