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

test('drops the variables a name filter used to miss: *_PASS, *_PWD, *_JWT, connection strings, URLs with / in the password', () => {
  const kept = withoutSecrets({
    DB_PASS: 'hunter2',
    SMTP_PASS: 'mailme',
    DB_PWD: 'Pwd4Db',
    APP_JWT: 's1gn3d.t0k3n.v4lu3',
    SQL: 'Server=db;User Id=sa;Password=Str0ng;',
    UPSTREAM: 'mysql://root:sl4sh/in/Pw@db:3306/shop',
    BUILD_NOTE: 'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ',
    COMPASS: 'north',
    EDITOR: 'vi',
  });
  assert.deepEqual(Object.keys(kept).sort(), ['COMPASS', 'EDITOR']);
});
