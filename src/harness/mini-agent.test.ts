import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ScriptedModelServer, scriptedModel, type ScriptedTurn } from '../testing/index.ts';
import { MiniAgent } from './mini-agent.ts';
import { probeBubblewrap } from './sandbox.ts';

const probe = probeBubblewrap();
const skip = probe.usable ? false : `bubblewrap cannot run here: ${probe.reason}`;
if (skip) console.log(`# skipping the sandboxed MiniAgent tests: ${skip}`);

/** Twenty credentials as they sit in a developer's environment, some under names no filter would suspect. */
const PLANTED: Record<string, string> = {
  OPENAI_API_KEY: 'sk-proj-PlantedOpenAi0000000000000001',
  ANTHROPIC_API_KEY: 'sk-ant-api03-PlantedAnthropic000000002',
  AWS_ACCESS_KEY_ID: 'AKIAPLANTED000000003',
  AWS_SECRET_ACCESS_KEY: 'plantedAwsSecret/0000000000000000000004',
  GITHUB_TOKEN: 'ghp_Planted00000000000000000000000000005',
  NPM_TOKEN: 'npm_Planted00000000000000000000000000006',
  HF_TOKEN: 'hf_Planted000000000000000000000000000007',
  STRIPE_SECRET_KEY: 'sk_live_Planted000000000000008',
  DB_PASS: 'planted-db-pass-009',
  SMTP_PASS: 'planted-smtp-pass-010',
  DB_PWD: 'planted-db-pwd-011',
  APP_JWT: 'planted.jwt.value-012',
  SQL_CONN: 'Server=db;User Id=sa;Password=planted-conn-013;',
  DATABASE_URL: 'postgres://app:planted/pass-014@db:5432/app',
  REDIS_URL: 'redis://:planted-redis-015@cache:6379',
  AZURE_STORAGE_CONNECTION_STRING: 'AccountName=a;AccountKey=plantedAzureKey0000000016==',
  SLACK_BOT_TOKEN: 'xoxb-planted-0000000000-017',
  BUILD_LABEL: 'planted-innocent-name-018',
  DEPLOY_HOOK: 'https://hooks.example.com/planted-019',
  CI_NOTE: 'planted-plain-value-020',
};

const READS = [
  'env',
  'printenv',
  'tr "\\0" "\\n" < /proc/$PPID/environ',
  'tr "\\0" "\\n" < /proc/1/environ',
  'for f in /proc/*/environ; do tr "\\0" "\\n" < "$f"; done',
  'ps eww -A',
  'cat /proc/self/environ /proc/$$/environ',
];

describe('MiniAgent in the bubblewrap sandbox', { skip }, () => {
  let workingDirectory: string;
  before(() => {
    workingDirectory = realpathSync(mkdtempSync(path.join(tmpdir(), 'mini-agent-')));
    Object.assign(process.env, PLANTED);
  });
  after(() => {
    for (const name of Object.keys(PLANTED)) delete process.env[name];
    rmSync(workingDirectory, { recursive: true, force: true });
  });

  test('no planted credential reaches any request to the model, however the commands read the environment', async () => {
    const script: ScriptedTurn[] = [
      ...READS.map((command) => ({ toolCalls: [{ name: 'shell', arguments: { command } }] })),
      { toolCalls: [{ name: 'submit', arguments: { summary: 'looked around' } }] },
    ];
    await using server = await new ScriptedModelServer({ script }).start();
    const agent = new MiniAgent({ model: scriptedModel(server), workingDirectory, sandbox: 'bubblewrap', breaker: false, maxInvocations: 20 });
    assert.equal(agent.sandbox, 'bubblewrap');
    const result = await agent.run('Show me the environment.');
    assert.equal(result.status, 'completed', result.reason);
    assert.equal(server.requests.length, READS.length + 1);
    // The commands did run and their output went to the model: the sandbox's own variables are there.
    const last = JSON.stringify(server.requests.at(-1)?.body);
    assert.match(last, /PATH=/);
    assert.match(last, /\.governor-tmp/);
    for (const request of server.requests) {
      const sent = JSON.stringify(request);
      for (const [name, value] of Object.entries(PLANTED)) assert.ok(!sent.includes(value), `${name} reached the model`);
    }
  });
});

describe('MiniAgent options', () => {
  test('an unknown sandbox mode is a clear option error; none is taken as asked', async () => {
    await using server = await new ScriptedModelServer({ script: [] }).start();
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'mini-agent-')));
    try {
      assert.throws(
        () => new MiniAgent({ model: scriptedModel(server), workingDirectory: dir, sandbox: 'jail' as 'none' }),
        (error) => error instanceof InvalidOptionError && error.option === 'sandbox',
      );
      assert.equal(new MiniAgent({ model: scriptedModel(server), workingDirectory: dir, sandbox: 'none' }).sandbox, 'none');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
