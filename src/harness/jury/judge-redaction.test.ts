import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockLanguageModelV4 } from 'ai/test';
import { commandJudge } from './command-judge.ts';
import { fileContainsJudge } from './file-judges.ts';
import type { Judge, Verdict } from './judge.ts';
import { Jury } from './jury.ts';
import { llmJudge } from './llm-judge.ts';

const SECRET = 'hunter2hunter2';
const goal = 'fix the build';

let workingDirectory: string;
before(() => {
  workingDirectory = mkdtempSync(path.join(tmpdir(), 'judge-redaction-'));
});
after(() => rmSync(workingDirectory, { recursive: true, force: true }));

/** Every text of a verdict a report shows, nested ones included. */
function shown(verdict: Verdict): string {
  return JSON.stringify(verdict);
}

/** A judging model answering `reasoning`, through the real llmJudge client. */
function modelReasoning(reasoning: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: {
      content: [{ type: 'text', text: JSON.stringify({ pass: false, score: 0.2, reasoning }) }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 50, noCache: 50, cacheRead: 0, cacheWrite: undefined },
        outputTokens: { total: 20, text: 20, reasoning: undefined },
      },
      warnings: [],
    },
  });
}

describe('judges keep secrets out of names and reasoning', () => {
  test('a command judge named after its command: the name and the jury report hold no password', async () => {
    const judge = commandJudge(`PGPASSWORD=${SECRET} psql -h db -c "select 1"`, { sandbox: 'none' });
    assert.doesNotMatch(judge.name, new RegExp(SECRET));
    assert.match(judge.name, /^command: PGPASSWORD=\[REDACTED\] psql/);
    const verdict = await new Jury({ judges: [judge], strategy: 'majority' }).judge({ goal, workingDirectory });
    assert.doesNotMatch(shown(verdict), new RegExp(SECRET));
    assert.equal(verdict.details?.[0]?.judge, judge.name);
  });

  test('a jury redacts a name its judge was given', async () => {
    const named: Judge = { name: `db password=${SECRET}`, judge: async () => ({ judge: 'x', status: 'pass', score: 1, reasoning: 'ok' }) };
    const verdict = await new Jury({ judges: [named], strategy: 'majority' }).judge({ goal });
    assert.doesNotMatch(shown(verdict), new RegExp(SECRET));
    assert.match(verdict.reasoning, /- db password=\[REDACTED\]: pass/);
    // Weights still refer to the name as given.
    const failing: Judge = { name: 'lint', judge: async () => ({ judge: 'lint', status: 'fail', score: 0, reasoning: 'no' }) };
    const weighted = await new Jury({ judges: [named, failing], strategy: 'weighted', weights: { [named.name]: 3 } }).judge({ goal });
    assert.equal(weighted.score, 0.75);
    assert.doesNotMatch(shown(weighted), new RegExp(SECRET));
  });

  test('a command judge alone redacts its reasoning: the command and its output', async () => {
    const judge = commandJudge(`echo "DB_PASSWORD=${SECRET}"; PGPASSWORD=${SECRET} false`, { name: 'db check', sandbox: 'none' });
    const alone = await judge.judge({ goal, workingDirectory });
    assert.equal(alone.status, 'fail');
    assert.doesNotMatch(alone.reasoning, new RegExp(SECRET));
    assert.match(alone.reasoning, /exited with code 1[\s\S]*DB_PASSWORD=\[REDACTED\]/);
    // In a jury the reasoning is the same: redacting it again changes nothing.
    const verdict = await new Jury({ judges: [judge], strategy: 'majority' }).judge({ goal, workingDirectory });
    assert.equal(verdict.details?.[0]?.reasoning, alone.reasoning);
  });

  test('a command judge that cannot start its command redacts the command it quotes', async () => {
    const judge = commandJudge(`PGPASSWORD=${SECRET} true`, { name: 'db', sandbox: 'none', cwd: 'missing-dir' });
    const alone = await judge.judge({ goal, workingDirectory });
    assert.equal(alone.status, 'error');
    assert.doesNotMatch(alone.reasoning, new RegExp(SECRET));
  });

  test("an llm judge alone redacts the model's reasoning", async () => {
    const judge = llmJudge({
      model: modelReasoning(`The .env still holds password=${SECRET}, which must not be committed.`),
      criteria: 'no secrets committed',
    });
    const alone = await judge.judge({ goal, result: { status: 'completed', output: 'Committed .env' } });
    assert.equal(alone.status, 'fail');
    assert.equal(alone.reasoning, 'The .env still holds password=[REDACTED], which must not be committed.');
  });

  test('the file judges alone redact their reasoning: the text looked for may be a key', async () => {
    const key = `sk-proj-${'Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6qW0eRt'}`;
    writeFileSync(path.join(workingDirectory, '.env'), `OPENAI_API_KEY=${key}\n`);
    for (const judge of [fileContainsJudge('.env', `OPENAI_API_KEY=${key}`), fileContainsJudge('.env', new RegExp(key)), fileContainsJudge('.env', key)]) {
      const verdict = await judge.judge({ goal, workingDirectory });
      assert.equal(verdict.status, 'pass');
      assert.doesNotMatch(shown(verdict), /Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6qW0eRt/);
    }
  });
});
