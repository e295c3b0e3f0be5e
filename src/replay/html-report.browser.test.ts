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
});

async function visibleIds(page: import('playwright-core').Page): Promise<string[]> {
  const ids: string[] = [];
  for (const run of await page.locator('details.run').all()) {
    if (await run.isVisible()) ids.push((await run.locator('summary .id').textContent()) ?? '');
  }
  return ids;
}
