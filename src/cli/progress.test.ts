import assert from 'node:assert/strict';
import { printable } from '../redaction/terminal-text.ts';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { AgentLoopResult } from '../harness/agent-loop.ts';
import { ScriptedModelServer } from '../testing/index.ts';
import { clip, progressLine, summaryLines } from './progress.ts';

const run = promisify(execFile);
const BIN = new URL('./bin.ts', import.meta.url).pathname;

const TOKEN = 'ghp_R4nd0mT0k3nABCDEFGHIJKLMNOPQRSTUVWXYZab';
const KEY_BODY =
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x';
const KEY = `-----BEGIN RSA PRIVATE KEY-----\n${KEY_BODY}\n-----END RSA PRIVATE KEY-----`;
const SUMMARY = `Used token ${TOKEN}. Key:\n${KEY}`;

/** Any run of 8 characters of the token or the key body: a secret printed in part is still printed. */
function assertNoSecretFragment(text: string): void {
  for (const secret of [TOKEN, KEY_BODY]) {
    for (let i = 0; i + 8 <= secret.length; i += 4) {
      assert.ok(!text.includes(secret.slice(i, i + 8)), `"${secret.slice(i, i + 8)}" of a secret printed in:\n${text}`);
    }
  }
  assert.doesNotMatch(text, /BEGIN RSA PRIVATE KEY/);
}

function result(output: string): AgentLoopResult {
  return {
    status: 'completed',
    invocations: 2,
    turns: 1,
    toolCalls: 2,
    usage: { inputTokens: 10, outputTokens: 5 },
    costUsd: 'unknown',
    output,
    reason: undefined,
    error: undefined,
    durationMs: 1234,
    conversationId: 'c1',
    messages: [],
  } as unknown as AgentLoopResult;
}

describe('progress output', () => {
  test('clip redacts the whole text before it shortens it', () => {
    const line = clip(SUMMARY, 60);
    assert.ok(line.length <= 60, line);
    assertNoSecretFragment(line);
    assert.match(line, /^Used token \[REDACTED\]\. Key: \[REDACTED\]…?$/);
  });

  test('a cut never splits a [REDACTED] marker', () => {
    const text = `${'a'.repeat(40)} ${TOKEN} and more text after it`;
    for (let max = 30; max <= 70; max++) {
      const line = clip(text, max);
      assert.ok(line.length <= max, `${max}: ${line}`);
      // Either the whole marker or none of it.
      assert.doesNotMatch(line.replace('[REDACTED]', ''), /\[R|\[$/, `${max}: ${line}`);
    }
  });

  test('a command that ends with a word a secret may follow (pwd, credentials) keeps its result in the printed line', () => {
    for (const command of ['echo hello > out.txt && cat out.txt && pwd', 'cat config/credentials']) {
      const line = printable(
        progressLine({ type: 'tool-call-end', toolName: 'shell', args: { command }, result: '/work/out\n', durationMs: 3 }, () => undefined)!,
      );
      assert.equal(line, `   shell ${command}  ->  /work/out (3 ms)`);
    }
  });

  test('the summary says an unknown cost once; a retry names the HTTP status of a failed answer, not the 200 of one that broke off', () => {
    assert.ok(
      summaryLines(result('done'), 'scripted').includes('Tokens: 10 in, 5 out (15 tokens)   cost: unknown'),
      summaryLines(result('done'), 'scripted').join('\n'),
    );
    const retry = (statusCode: number | undefined) =>
      progressLine(
        { type: 'retry', invocation: 1, attempt: 1, delayMs: 500, statusCode, error: new Error('boom') } as Parameters<typeof progressLine>[0],
        () => undefined,
      );
    assert.equal(retry(503), '   model call #1 failed (HTTP 503), retry 1 in 0.5 s: boom');
    assert.equal(retry(200), '   model call #1 failed, retry 1 in 0.5 s: boom');
    assert.equal(retry(undefined), '   model call #1 failed, retry 1 in 0.5 s: boom');
  });

  test('a call that could not run gets a line of its own, saying what the model was told', () => {
    const line = progressLine(
      { type: 'tool-call-refused', toolName: 'browse', args: { url: 'x' }, message: 'Unknown tool "browse". Available tools: shell, submit.' },
      () => undefined,
    );
    assert.equal(line, '   browse not run: Unknown tool "browse". Available tools: shell, submit.');
  });

  test('progress lines and the summary print no part of a secret longer than the clip', () => {
    const lines = [
      progressLine({ type: 'tool-call-end', toolName: 'submit', args: { summary: SUMMARY }, result: SUMMARY, durationMs: 3 }, () => undefined),
      progressLine({ type: 'tool-call-end', toolName: 'shell', args: { command: `echo ${KEY}` }, result: KEY, durationMs: 3 }, () => undefined),
      progressLine({ type: 'tool-call-error', toolName: 'shell', args: {}, error: new Error(SUMMARY), durationMs: 3 }, () => undefined),
      progressLine(
        {
          type: 'invocation-end',
          invocation: 1,
          usage: { inputTokens: 1, outputTokens: 1 },
          totalUsage: { inputTokens: 1, outputTokens: 1 },
          costUsd: 'unknown',
          toolCalls: [],
          text: SUMMARY,
        } as unknown as Parameters<typeof progressLine>[0],
        () => undefined,
      ),
      ...summaryLines(result(SUMMARY), 'scripted'),
    ].join('\n');
    assertNoSecretFragment(lines);
    assert.match(lines, /Output: Used token \[REDACTED\]\. Key: \[REDACTED\]/);
    assert.match(lines, /submit \{"summary":"Used token \[REDACTED\]\. Key:/);
  });

  test('governor run prints no part of a token or a private key, on stdout or stderr', async () => {
    await using server = await new ScriptedModelServer({
      onExhausted: 'repeat-last',
      script: [
        { toolCalls: [{ name: 'shell', arguments: { command: 'echo deploying' } }] },
        { toolCalls: [{ name: 'submit', arguments: { summary: SUMMARY } }] },
      ],
    }).start();
    const dir = mkdtempSync(join(tmpdir(), 'governor-cli-redact-'));
    try {
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!/^(OPENAI|ANTHROPIC|GOVERNOR)_/.test(k)) env[k] = v;
      const { stdout, stderr } = await run(
        process.execPath,
        [BIN, 'run', 'deploy', '--dir', dir, '--base-url', server.baseURL, '--model', 'scripted-stand-in', '--sandbox', 'none'],
        { env, timeout: 60_000 },
      );
      assert.match(stdout, /Result: completed/);
      assert.match(stdout, /Output: Used token \[REDACTED\]\. Key: \[REDACTED\]/);
      assert.match(stderr, /submit \{"summary":"Used token \[REDACTED\]/);
      assertNoSecretFragment(stdout);
      assertNoSecretFragment(stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
