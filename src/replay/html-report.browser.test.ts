/**
 * The replay report in a real browser (headless Chromium driven by
 * playwright-core): it renders, a run's drill-down opens, the category filter
 * works without any script, and hostile text in a trajectory is shown, never run.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { runReplayCommand } from './replay-command.ts';

function findChromium(): string | undefined {
  const candidates = [process.env['GOVERNOR_CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
  return candidates.find((candidate): candidate is string => candidate !== undefined && candidate !== '' && fs.existsSync(candidate));
}

const chromiumPath = findChromium();
const skip = chromiumPath === undefined ? "no Chromium found (install Debian's chromium or set GOVERNOR_CHROMIUM)" : false;
if (skip) console.log(`# skipping the browser test of the replay report: ${skip}`);

const HOSTILE_ID = '<script>window.__pwned = "id"</script>';
const HOSTILE_ARG = '<img src=x onerror="window.__pwned = \'arg\'">';
const HOSTILE_RESULT = '</style></table><script>alert("result")</script><iframe src="https://example.invalid/">';

function spiral(id: string, query: string, result: string): object {
  return {
    id,
    steps: [1, 2, 3, 4].flatMap((n) => [
      { kind: 'model', prompt_tokens: 100 * n, completion_tokens: 10, text: '' },
      { kind: 'tool_call', tool: 'search', args: { q: query }, result },
    ]),
  };
}

function errorLoop(id: string): object {
  return {
    id,
    steps: [1, 2, 3, 4].flatMap(() => [
      { kind: 'model', prompt_tokens: null, completion_tokens: null, text: '' },
      { kind: 'tool_call', tool: 'book', args: { flight: 'HAT030' }, result: 'Error: flight HAT030 not available', error: true },
    ]),
  };
}

describe('replay report in a real browser', { skip }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'governor-report-'));
  const report = path.join(dir, 'report.html');
  // Loaded lazily: the test file must load (and skip) where playwright-core is absent.
  let browser: import('playwright-core').Browser;

  before(async () => {
    const corpus = [spiral(HOSTILE_ID, HOSTILE_ARG, HOSTILE_RESULT), spiral('plain-spiral', 'weather in Paris', 'sunny'), errorLoop('booking-loop')];
    fs.writeFileSync(path.join(dir, 'runs.jsonl'), corpus.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const sink = {
      text: '',
      write(chunk: string) {
        this.text += chunk;
        return true;
      },
    };
    const code = await runReplayCommand(['runs.jsonl', '--json', '--html', 'report.html'], { stdout: sink, stderr: { write: () => true }, cwd: dir });
    assert.equal(code, 0, sink.text);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });

  after(async () => {
    await browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('renders, opens a drill-down, filters by category, and runs nothing from the trajectories', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    const requests: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('request', (request) => requests.push(request.url()));
    const url = pathToFileURL(report).href;
    await page.goto(url);

    assert.match(await page.title(), /^Governor replay — runs\.jsonl$/);
    assert.equal(await page.locator('h1').textContent(), 'Governor replay report');
    const runs = page.locator('details.run');
    assert.equal(await runs.count(), 3);

    // The hostile id is shown as text, in its run's summary.
    const hostile = runs.filter({ hasText: HOSTILE_ID });
    assert.equal(await hostile.count(), 1);

    // Drill-down: closed at first, open after a click, with the comparison and the steps visible.
    assert.equal(await hostile.evaluate((el) => (el as unknown as { open: boolean }).open), false);
    assert.equal(await hostile.locator('table.compare').isVisible(), false);
    await hostile.locator('summary').click();
    assert.equal(await hostile.evaluate((el) => (el as unknown as { open: boolean }).open), true);
    assert.equal(await hostile.locator('table.compare').isVisible(), true);
    assert.equal(await hostile.locator('table.steps tr.role-trip').count(), 1);
    const compared = await hostile.locator('table.compare').textContent();
    assert.ok(compared?.includes(HOSTILE_ARG), 'the hostile argument is shown literally');
    assert.ok((await hostile.locator('table.steps').textContent())?.includes('</style></table><script>'), 'the hostile result is shown literally');

    // Filter: only the error loop's run stays visible, then all again.
    const categories = await page.locator('.filter label').allTextContents();
    const errorLabel = categories.find((c) => c.startsWith('error_loop'));
    assert.ok(errorLabel, `an error_loop filter among ${categories.join(', ')}`);
    await page.locator('.filter label', { hasText: 'error_loop' }).click();
    assert.deepEqual(await visibleIds(page), ['booking-loop']);
    await page.locator('.filter label', { hasText: /^all/ }).click();
    assert.equal((await visibleIds(page)).length, 3);

    // Nothing ran, nothing was fetched.
    assert.equal(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned), undefined);
    assert.deepEqual(dialogs, []);
    assert.equal(await page.locator('iframe, img, script').count(), 0);
    assert.deepEqual(requests, [url]);
    await page.close();
  });

  test("bidirectional-text controls in a run's id, tool and arguments do not reorder the report's own text", async () => {
    const reversing = {
      id: 'run-\u202elmth.exe',
      steps: [1, 2, 3, 4, 5, 6].map(() => ({ kind: 'tool_call', tool: 'rm\u202e', args: { path: 'a\u202e' }, result: 'ok\u202e' })),
    };
    fs.writeFileSync(path.join(dir, 'bidi.jsonl'), `${JSON.stringify(reversing)}\n`);
    const code = await runReplayCommand(['bidi.jsonl', '--json', '--html', 'bidi.html'], {
      stdout: { write: () => true },
      stderr: { write: () => true },
      cwd: dir,
    });
    assert.equal(code, 0);
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(dir, 'bidi.html')).href);
    const run = page.locator('details.run');
    assert.equal(await run.count(), 1);
    // The summary reads left to right as written: line, id, category, action, step, what was saved.
    const parts = run.locator('summary > span');
    assert.ok((await parts.count()) >= 5);
    const lefts = await parts.evaluateAll((spans) => spans.map((span) => span.getBoundingClientRect().left));
    for (let i = 1; i < lefts.length; i++) assert.ok(lefts[i]! > lefts[i - 1]!, `summary part ${i} left of part ${i - 1}: ${lefts.join(', ')}`);
    // Right-to-left text in an id is laid out apart from the line around it (isolated), whatever its direction.
    const isolation = await run
      .locator('summary .id *')
      .evaluateAll((held) =>
        held.map((element) => (globalThis as unknown as { getComputedStyle(e: unknown): { unicodeBidi: string } }).getComputedStyle(element).unicodeBidi),
      );
    assert.deepEqual(isolation, ['isolate']);
    // The reason quotes the tool name and goes on in the breaker's words, which keep their order after it.
    const [called, times] = await run.locator('summary .reason').evaluate((reason) => {
      // The reason's text node, inside whatever element holds it.
      let text: typeof reason.firstChild = reason;
      while (text?.firstChild) text = text.firstChild;
      const content = text?.textContent ?? '';
      type TextRange = {
        setStart(node: unknown, offset: number): void;
        setEnd(node: unknown, offset: number): void;
        getBoundingClientRect(): { left: number };
      };
      const page = globalThis as unknown as { document: { createRange(): TextRange } };
      const left = (word: string): number => {
        const range = page.document.createRange();
        const at = content.indexOf(word);
        range.setStart(text, at);
        range.setEnd(text, at + word.length);
        return range.getBoundingClientRect().left;
      };
      return [left('called'), left('times')];
    });
    assert.ok(called! < times!, `"called" at ${called}, "times" at ${times}: the reason reads reversed`);
    await page.close();
  });
});

async function visibleIds(page: import('playwright-core').Page): Promise<string[]> {
  const ids: string[] = [];
  for (const run of await page.locator('details.run').all()) {
    if (await run.isVisible()) ids.push((await run.locator('summary .id').textContent()) ?? '');
  }
  return ids;
}
