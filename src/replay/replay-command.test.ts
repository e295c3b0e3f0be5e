import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import type { BreakerEvent, ProposedToolCall } from '../breaker/breaker-event.ts';
import { runReplayCommand, type ReplayIo } from './replay-command.ts';
import type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';

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
    assert.match(html, /<tr class="same"><th>args\.q<small>same<\/small><\/th>/);
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
    assert.match(html, /<span class="id">push https:\/\/x:\[REDACTED\]@github\.com\/o\/r<\/span>/);
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
      [[corpus, '--html', 'no-such-folder/report.html'], /cannot write --html no-such-folder\/report\.html: no such file/],
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
