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

test('drops the credential families: passphrases, *_CREDS, webhooks, DSNs, private keys, sessions, PATs, OTPs', () => {
  const secrets = {
    GPG_PASSPHRASE: 'correct horse battery staple',
    MAVEN_GPG_PASSPHRASE: 'hunter2hunter2',
    PASSPHRASE: 'p',
    REGISTRY_CREDS: 'deploy:pa55word',
    DOCKER_HUB_CRED: 'u:p',
    CREDS: 'u:p',
    CREDENTIALS: 'u:p',
    DISCORD_WEBHOOK: 'https://discord.com/api/webhooks/1/abc',
    SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/X',
    WEBHOOK: 'https://example.test/x',
    TEAMS_HOOK_URL: 'https://example.test/x',
    SENTRY_DSN: 'https://k@o1.ingest.sentry.io/1',
    APP_DSN: 'https://k@o1.ingest.sentry.io/1',
    DSN: 'postgres://app@db/app',
    DATABASE_DSN_URL: 'x',
    SSH_PRIVATE_KEY: '-----BEGIN OPENSSH PRIVATE KEY-----',
    DEPLOY_PRIVATE_KEY_PATH: '/k',
    BW_SESSION: 'abc',
    OP_SESSION_MY: 'abc',
    AWS_SESSION_TOKEN: 'abc',
    DB_PASS_FILE: '/run/secrets/db',
    SMTP_PW: 'x',
    ADO_PAT: 'x',
    NPM_OTP: '123456',
    SIM_PIN: '1234',
    WALLET_MNEMONIC: 'abandon abandon',
    BEARER: 'x',
    GCP_SERVICE_ACCOUNT: '{}',
    K8S_SERVICEACCOUNT_JSON: '{}',
    AZURE_STORAGE_CONN_STR: 'x',
    COOKIE_SALT: 'x',
    HMAC_KEY: 'x',
    TWINE_USERNAME: '__token__',
    OSSRH_USERNAME: 'me',
  };
  assert.deepEqual(withoutSecrets(secrets), {});
});

test('drops URLs that are credentials whatever their name: webhooks, token users, signed and keyed URLs', () => {
  const urls = {
    A: 'https://discord.com/api/webhooks/1234567890/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwx',
    B: 'https://discordapp.com/api/webhooks/1234567890/AbCdEf',
    C: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    D: 'https://contoso.webhook.office.com/webhookb2/a@b/IncomingWebhook/c/d',
    E: 'https://hooks.zapier.com/hooks/catch/123456/abcdef/',
    F: 'https://chat.googleapis.com/v1/spaces/AAA/messages?key=AIzaSy&token=abc',
    G: 'https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage',
    H: 'https://ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ@github.com/org/repo.git',
    I: 'https://abcdef0123456789abcdef0123456789@o0.ingest.sentry.io/0',
    J: 'https://bucket.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA&X-Amz-Signature=abc',
    K: 'https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=abc%3D',
    L: 'https://example.test/notify?access_token=abc',
    M: ' https://discord.com/api/webhooks/1/abc ',
  };
  assert.deepEqual(withoutSecrets(urls), {});
});

test('keeps the ordinary variables, URLs without credentials included', () => {
  const ordinary = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/home/u',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm-256color',
    COLORTERM: 'truecolor',
    CI: 'true',
    NODE_ENV: 'production',
    NODE_OPTIONS: '--max-old-space-size=4096',
    SHELL: '/bin/bash',
    USER: 'u',
    LOGNAME: 'u',
    EDITOR: 'vi',
    PAGER: 'less',
    TZ: 'UTC',
    HOSTNAME: 'box',
    PWD: '/home/u/project',
    OLDPWD: '/home/u',
    SHLVL: '1',
    JAVA_HOME: '/usr/lib/jvm/java-21',
    GOPATH: '/home/u/go',
    CARGO_HOME: '/home/u/.cargo',
    PYTHONPATH: '/src',
    VIRTUAL_ENV: '/home/u/.venv',
    DISPLAY: ':0',
    XDG_CONFIG_HOME: '/home/u/.config',
    TMUX: '/tmp/tmux-1000/default,123,0',
    DEBIAN_FRONTEND: 'noninteractive',
    FORCE_COLOR: '1',
    GPG_TTY: '/dev/pts/0',
    COMPASS: 'north',
    PATHEXT: '.COM',
    HTTP_PROXY: 'http://proxy.internal:3128',
    PIP_INDEX_URL: 'https://pypi.org/simple',
    PUBLIC_URL: 'https://example.test/app?page=2&q=docs',
    GIT_REMOTE: 'ssh://git@github.com/org/repo.git',
    GIT_AUTHOR_NAME: 'Ada',
  };
  assert.deepEqual(withoutSecrets(ordinary), ordinary);
});
