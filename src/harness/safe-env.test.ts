import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretVariable, withoutSecrets } from './safe-env.ts';

test('drops credential-like variables and keeps the ordinary ones', () => {
  const kept = withoutSecrets({
    PATH: '/usr/bin',
    HOME: '/home/u',
    LANG: 'C.UTF-8',
    TERM: 'xterm',
    FOO_API_KEY: 'k',
    GITHUB_TOKEN: 't',
    NPM_TOKEN: 't',
    OPENAI_BASE_URL: 'https://example.test',
    ANTHROPIC_API_KEY: 'k',
    AWS_REGION: 'eu-west-1',
    DB_PASSWORD: 'p',
    SSH_AUTH_SOCK: '/s',
    SERVICE_URL: 'postgres://app:hunter2@db:5432/app',
    PUBLIC_URL: 'https://example.test/app',
    GIT_AUTHOR_NAME: 'Ada',
    UNSET: undefined,
  });
  assert.deepEqual(Object.keys(kept).sort(), ['GIT_AUTHOR_NAME', 'HOME', 'LANG', 'PATH', 'PUBLIC_URL', 'TERM']);
});

test('judges names case-insensitively', () => {
  assert.equal(isSecretVariable('my_secret', 'x'), true);
  assert.equal(isSecretVariable('Session_Cookie', 'x'), true);
  assert.equal(isSecretVariable('EDITOR', 'vi'), false);
});
