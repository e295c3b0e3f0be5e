import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { TOKEN_RULES } from './secret-rules.ts';
import { mayHoldSecret } from './may-hold-secret.ts';
import { redactByRules as redact } from './redact.ts';

/** The words redact() takes for secret names, read from its source: a word added there must be caught here too. */
function secretNameWords(): string[] {
  const source = fs.readFileSync(path.join(import.meta.dirname, 'secret-names.ts'), 'utf8');
  const words: string[] = [];
  for (const name of ['ALWAYS_SECRET', 'OFTEN_SECRET']) {
    const set = new RegExp(`const ${name} = new Set\\(\\[([^\\]]*)\\]\\)`).exec(source);
    assert.ok(set, `secret-names.ts defines ${name}`);
    words.push(...[...set[1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!));
  }
  for (const name of ['ALWAYS_SUFFIX', 'OFTEN_SUFFIX']) {
    const suffix = new RegExp(`const ${name} = /\\(\\?:([^)]*)\\)\\$/i;`).exec(source);
    assert.ok(suffix, `secret-names.ts defines ${name}`);
    // A suffix ends a longer word: `dbpassword`.
    words.push(...suffix[1]!.split('|').map((w) => `db${w}`));
  }
  return words;
}

/** Deterministic pseudo-random numbers. */
function prng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

describe('mayHoldSecret (redact() skips its rules where they cannot change a text)', () => {
  test('every secret-name word of redact(), in every syntax it redacts, is caught', () => {
    const words = secretNameWords();
    assert.ok(words.length > 20);
    const value = 'Xk9mQ2vL7pZr4wT8';
    for (const word of words) {
      for (const form of [word, word.toUpperCase(), `my_${word}`, `app.${word}_`, `x${word[0]!.toUpperCase()}${word.slice(1)}`]) {
        for (const text of [
          `${form}: ${value}`,
          `${form}=${value}`,
          `"${form}": "${value}"`,
          `'${form}' => '${value}'`,
          `run --${form} ${value}`,
          `run -${form}=${value}`,
          `${form}：${value}`,
          `**${form}:** ${value}`,
          `**${form}**: ${value}`,
          `q=${form}%3D${value}`,
          `%7B%22${form}%22%3A%22${value}%22%7D`,
          `${form}%253D${value}`,
          `the ${form} is ${value}`,
          `${form} [None]: ${value}`,
          `- name: ${form}\n  value: ${value}`,
          `{"name": "${form}", "value": "${value}"}`,
          JSON.stringify(`- name: ${form}\n  value: "${value}"`),
        ]) {
          if (redact(text) !== text) assert.ok(mayHoldSecret(text), text);
        }
      }
    }
  });

  test('token shapes, authorisation headers and URL passwords are caught', () => {
    const texts = [
      'key AKIAIOSFODNN7EXAMPLE here',
      'ghp_0123456789abcdefABCDEF0123456789abcd',
      'use sk-proj-abcdefghijklmnopqrstuvwx12 now',
      'xoxb-1234567890-abcdefghijklmn',
      'eyJhbGciOiJIUzI1NiJ9aaaa.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmn',
      'DP.PT.abcdefghijklmnopqrstuvwxyz0123456789abcdefg',
      'Authorization: Bearer abc.def-123456',
      'curl https://me:s3cret@example.com/x',
      'proxy: Basic dXNlcjpwYXNz',
      'h=%22Bearer%209f86d081884c7d659a2feaa0c55ad015%22',
      'q=%22ghp_0123456789abcdefABCDEF0123456789abcd%22',
      'git clone https://9f86d081884c7d659a2feaa0c55ad015@github.com/o/r',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----',
      'AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vT3kLmN',
      'machine h login app password hunter2',
      "CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'",
      "ALTER ROLE app PASSWORD 'hunter2'",
      "SET PASSWORD FOR app = 'hunter2'",
      'redis-cli -a hunter2 ping',
      'the password is hunter2',
    ];
    for (const text of texts) {
      assert.notEqual(redact(text), text, `redact() changes ${text}`);
      assert.ok(mayHoldSecret(text), text);
    }
    assert.ok(TOKEN_RULES.length > 20);
  });

  test('random texts built from the pieces secrets are made of: whenever it says no, redact() leaves the text as it is', () => {
    const rand = prng(7);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const blob = (n: number) => Array.from({ length: n }, () => alnum[Math.floor(rand() * alnum.length)]).join('');
    const pieces = [
      () => pick(['the', 'status', 'report', 'token', 'key', 'password', 'Pass', 'sig', 'signature', 'auth', 'cookie', 'sas', 'dsn', 'pwd', 'jwt', 'secret']),
      () => pick([' ', ' ', '\n', ':', '=', ' = ', ': ', '"', "'", '-', '--', '_', '.', '@', '://', '/', '=>', ':=', ';', ',']),
      () =>
        pick(['Bearer', 'basic', 'https', 'sk-', 'sk_live_', 'ghp_', 'AKIA', 'xoxb-', 'eyJ', 'hf_', 'SG.', 'dapi', 'key-', 'AIza', 'glpat-', 'npm_', 'sig=']),
      // The command-line forms, escaped quotes, XML elements, authorisation schemes and cut private keys.
      () =>
        pick([
          'mysql',
          'mariadb-dump',
          ' -p',
          ' -u ',
          ' -sfu ',
          '--user',
          '--proxy-user=',
          'sshpass',
          'docker login',
          'config set',
          'configure set aws_secret_access_key',
          '\\"',
          '\\\\\\"',
          '<password>',
          '</password>',
          '<apiKey>',
          'Authorization: Token',
          'authorization=ApiKey',
          '-----BEGIN PRIVATE KEY-----',
          '-----END RSA PRIVATE KEY-----',
          '\\n',
          'SECRET_KEY_BASE',
          // URL-encoded separators and quotes, full-width ones, Markdown emphasis, names in other scripts, Basic credentials.
          '%3D',
          '%253D',
          '%22',
          '%3A%22',
          '%26',
          '%20',
          '：',
          '**',
          'пароль',
          '密码',
          'Passwort',
          'contraseña',
          'Basic dXNlcjpwYXNz',
          'Basic%20',
          // Sentences, .netrc entries, SQL, list entries, prompts, redis-cli and AWS key pairs.
          ' is ',
          ' was ',
          ' for app is ',
          ' set to ',
          'machine',
          ' login ',
          'default',
          'IDENTIFIED BY',
          'PASSWORD FOR',
          "PASSWORD '",
          'name: ',
          '\nvalue: ',
          '","value":"',
          ' [None]: ',
          'redis-cli',
          ' -a ',
          'AKIAIOSFODNN7EXAMPLE,',
        ]),
      () => blob(1 + Math.floor(rand() * 40)),
      () => String(Math.floor(rand() * 1e6)),
    ];
    let skipped = 0;
    let changed = 0;
    for (let i = 0; i < 20_000; i++) {
      const parts: string[] = [];
      const n = 1 + Math.floor(rand() * 12);
      for (let j = 0; j < n; j++) parts.push(pick(pieces)());
      const text = parts.join(rand() < 0.5 ? '' : ' ');
      const redacted = redact(text);
      if (redacted !== text) changed++;
      if (!mayHoldSecret(text)) {
        skipped++;
        assert.equal(redacted, text, JSON.stringify(text));
      }
    }
    // Both sides are exercised: texts it lets skip redaction, and texts redaction changes.
    assert.ok(skipped > 1000, `skipped ${skipped}`);
    assert.ok(changed > 1000, `changed ${changed}`);
  });

  test('prose with no secret-shaped piece is skipped', () => {
    assert.equal(mayHoldSecret('The build failed because the config file was missing; I will create it and run the tests again.'), false);
    assert.equal(mayHoldSecret('alpha12 beta340 gamma5 sigma77 omega1'), false);
  });
});
