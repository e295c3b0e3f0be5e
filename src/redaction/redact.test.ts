import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redact, redactSecrets, redactValue } from '../index.ts';
import { NOT_SECRETS, SECRET_FORMATS } from './test-support/secret-formats.ts';

describe('redact', () => {
  for (const format of SECRET_FORMATS) {
    test(`removes ${format.name}`, () => {
      const out = redact(format.text);
      assert.ok(!out.includes(format.secret), `${format.name} survived: ${out}`);
      assert.match(out, /\[REDACTED\]/);
    });
  }

  test('a token joined to its neighbours by underscores is found', () => {
    const tokens = [
      'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ',
      'sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c',
      'sk_live_4eC39HqLyjWDarjtT1zdp7dcQ2',
      'hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh',
      'AKIAIOSFODNN7EXAMPLE',
      'npm_Ab3dEf6hIj9lMn0pQr3tUv6xYz9AbC2eFg5h',
    ];
    for (const token of tokens) {
      for (const text of [`push_${token}`, `${token}_old`, `branch feature_${token}_backup merged`]) {
        const out = redact(text);
        assert.ok(!out.includes(token.slice(4)), `${text} -> ${out}`);
        assert.match(out, /\[REDACTED\]/);
      }
    }
    // Letters or digits right before a prefix still make it part of a longer word.
    assert.equal(redact('task-list and desk-lamp-adjustment-guide-v2'), 'task-list and desk-lamp-adjustment-guide-v2');
    assert.equal(redact('AskForeignKeyConstraint_ghp_short'), 'AskForeignKeyConstraint_ghp_short');
  });

  test('every password of an env dump goes, the names stay', () => {
    const out = redact('DB_PASS=hunter2\nSMTP_PASS=mailme\nDB_PWD=Pwd4Db\nAPP_JWT=s1gn3d.t0k3n.v4lu3\nEDITOR=vi');
    for (const secret of ['hunter2', 'mailme', 'Pwd4Db', 's1gn3d.t0k3n.v4lu3']) assert.ok(!out.includes(secret), out);
    assert.match(out, /^DB_PASS=\[REDACTED\]$/m);
    assert.match(out, /^EDITOR=vi$/m);
  });

  test('an assignment right after an ordinary one is still found', () => {
    assert.equal(redact('note: DB_PASSWORD=hunter2'), 'note: DB_PASSWORD=[REDACTED]');
    assert.equal(redact('mode=fast secret=hunter2'), 'mode=fast secret=[REDACTED]');
    assert.equal(redact('run --password hunter2 --verbose'), 'run --password [REDACTED] --verbose');
  });

  test('keeps the URL around a redacted password', () => {
    assert.equal(redact('postgres://app:s3cret@db:5432/x'), 'postgres://app:[REDACTED]@db:5432/x');
    assert.equal(redact('redis://:p@ss/w@cache:6379'), 'redis://:[REDACTED]@cache:6379');
  });

  test('a URL with a password after a secret name comes out whole, once redacted, and stays so', () => {
    // fetch's own words for a base URL with user:password@ (what governor run printed, half redacted: "[REDACTED]]@127.0.0.1…").
    const message = 'Request cannot be constructed from a URL that includes credentials: http://me:pw@127.0.0.1:18001/v1/chat/completions';
    const out = redact(message);
    assert.equal(out, 'Request cannot be constructed from a URL that includes credentials: http://me:[REDACTED]@127.0.0.1:18001/v1/chat/completions');
    // Sinks redact what an earlier sink already redacted (an error message, then the CLI's output).
    assert.equal(redact(out), out);
    assert.equal(redact('credentials: http://me:pw@host'), 'credentials: http://me:[REDACTED]@host');
    assert.equal(redact('"password": "http://me:pw@host"'), '"password": "http://me:[REDACTED]@host"');
    // A value that an earlier rule redacted only in part goes whole: no prefix of it, no stray bracket.
    assert.equal(redact('password=foo-sk-proj-abcdefghijklmnopqrstuvwxyz0123'), 'password=[REDACTED]');
  });

  for (const sample of NOT_SECRETS) {
    test(`keeps ${sample.name}`, () => {
      assert.equal(redact(sample.text), sample.text);
    });
  }

  test('redactValue replaces values under secret names and keeps counts', () => {
    const out = redactValue({
      headers: { Authorization: 'Bearer 9f86d081884c7d659a2feaa0c55ad015', 'x-request-id': 'abc' },
      db: { password: 'hunter2', host: 'db' },
      usage: { inputTokens: 12, outputTokens: 3 },
      cacheKey: 'user:42',
    });
    assert.deepEqual(out, {
      headers: { Authorization: '[REDACTED]', 'x-request-id': 'abc' },
      db: { password: '[REDACTED]', host: 'db' },
      usage: { inputTokens: 12, outputTokens: 3 },
      cacheKey: 'user:42',
    });
  });

  test('redactValue lets nothing out raw, however deep it sits', () => {
    const token = 'sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c';
    let value: unknown = { apiKey: token, password: 'hunter2', note: `curl -H "Authorization: Bearer 9f86d081884c7d659a2feaa0c55ad015"`, count: 3 };
    for (let level = 0; level < 20; level++) value = { level, child: value };
    const out = JSON.stringify(redactValue(value));
    for (const secret of [token.slice(8), 'hunter2', '9f86d081884c7d659a2feaa0c55ad015']) assert.ok(!out.includes(secret), `${secret} got out: ${out}`);
    // What is not secret still shows, so a deep log record stays readable.
    assert.match(out, /count\\":3/);
  });

  test('redactValue copes with cycles and with shared objects repeated at every level', () => {
    // A cycle that closes below the depth where objects are still copied.
    const top: Record<string, unknown> = { secret: 'hunter2' };
    let node = top;
    for (let level = 0; level < 30; level++) node = (node.child = { level }) as Record<string, unknown>;
    node.loop = top;
    const deep = JSON.stringify(redactValue(top));
    assert.ok(!deep.includes('hunter2'), deep);
    assert.match(deep, /\[Circular\]/);

    const cyclic: Record<string, unknown> = { name: 'root', password: 'hunter2' };
    cyclic.self = cyclic;
    cyclic.list = [cyclic, { back: cyclic }];
    assert.deepEqual(redactValue(cyclic), { name: 'root', password: '[REDACTED]', self: '[Circular]', list: ['[Circular]', { back: '[Circular]' }] });

    // 2^40 paths to the leaf: copying or rendering every one would never end.
    let shared: unknown = { leaf: 'password=hunter2' };
    for (let level = 0; level < 40; level++) shared = { a: shared, b: shared };
    const started = performance.now();
    const flat = JSON.stringify(redactValue(shared));
    assert.ok(performance.now() - started < 5000, 'bounded work');
    assert.ok(!flat.includes('hunter2'));
  });

  test('binary data deep inside a value is its size, not its bytes', () => {
    let value: unknown = { blob: Buffer.from('secret bytes here') };
    for (let level = 0; level < 20; level++) value = { level: value };
    const out = JSON.stringify(redactValue(value));
    assert.match(out, /\[17 bytes\]/);
    assert.doesNotMatch(out, /"data"/);
  });

  test('redactSecrets is the same function (deprecated alias)', () => {
    assert.equal(redactSecrets, redact);
  });
});

describe('redact: text of other formats and command lines', () => {
  test('a secret in JSON text goes and the JSON stays valid, at any depth of escaping', () => {
    const summary = 'Added export DB_PASSWORD="hunter2" to .env and set "password": "s3cr3t-admin" in config.json';
    let text = JSON.stringify({ output: summary });
    for (let depth = 0; depth < 3; depth++) {
      const out = redact(text);
      for (const secret of ['hunter2', 's3cr3t-admin']) assert.ok(!out.includes(secret), out);
      // What was JSON is still JSON, and still says where a value was.
      assert.doesNotThrow(() => JSON.parse(out), out);
      assert.match(out, /DB_PASSWORD=\\+"\[REDACTED\]\\+"/);
      text = JSON.stringify({ log: text });
    }
  });

  test('a quoted value cut before its closing quote goes to the end of its line', () => {
    assert.equal(redact('"password": "hunter2-and-more\nnext line'), '"password": "[REDACTED]\nnext line');
    assert.equal(redact('{\\"password\\": \\"hunter2'), '{\\"password\\": \\"[REDACTED]');
  });

  test('command-line credentials go, the command around them stays', () => {
    assert.equal(redact('mysql -uroot -pHunter2x -h db -e "select 1"'), 'mysql -uroot -p[REDACTED] -h db -e "select 1"');
    assert.equal(redact(`mysqldump -p'pa ss' shop`), `mysqldump -p'[REDACTED]' shop`);
    assert.equal(redact('curl -u admin:hunter2 https://x'), 'curl -u admin:[REDACTED] https://x');
    assert.equal(redact('sshpass -p hunter2 ssh root@h'), 'sshpass -p [REDACTED] ssh root@h');
    assert.equal(redact('aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENGbPxRfiCY'), 'aws configure set aws_secret_access_key [REDACTED]');
    assert.equal(
      redact('npm config set //registry.example.com/:_authToken "Zk3pQ9xLm2Vb7RtY"'),
      'npm config set //registry.example.com/:_authToken "[REDACTED]"',
    );
  });

  test('what a cap leaves of a private key goes: the BEGIN line with the first lines, or the last lines with the END line', () => {
    const lines = Array.from({ length: 6 }, (_, i) => `MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDbvd3roDmQZNV${i}`);
    const head = `$ cat key.pem\n-----BEGIN RSA PRIVATE KEY-----\n${lines.slice(0, 3).join('\n')}`;
    assert.equal(redact(head), '$ cat key.pem\n[REDACTED]');
    const tail = `... 2 KB cut ...\n${lines.slice(3).join('\n')}\n-----END RSA PRIVATE KEY-----\n$ echo done`;
    assert.equal(redact(tail), '... 2 KB cut ...\n[REDACTED]\n$ echo done');
    // Lines joined by spaces or by `\n` escapes (JSON text) are found the same way.
    assert.ok(!redact(lines.join(' ') + ' -----END PRIVATE KEY-----').includes(lines[0]!.slice(0, 20)));
    assert.ok(!redact(JSON.stringify(tail)).includes(lines[4]!.slice(0, 20)));
    // Words before the key stay.
    assert.match(redact(`the tail of the file: ${lines[5]}\n-----END PRIVATE KEY-----`), /^the tail of the file: \[REDACTED\]$/);
  });

  test('a long text with a key marker and no key is redacted in bounded work', () => {
    const base64 = 'QUJD'.repeat(250_000);
    const started = performance.now();
    redact(`-----END PRIVATE KEY----- ${base64}`);
    redact(`${base64} -----END PRIVATE KEY-----`);
    redact(`-----BEGIN PRIVATE KEY-----${base64}`);
    redact(`mysql ${' x'.repeat(200_000)}`);
    redact(`<password>${'a'.repeat(500_000)}`);
    assert.ok(performance.now() - started < 5000, 'bounded work');
  });

  test('redacting again changes nothing', () => {
    for (const format of SECRET_FORMATS) {
      const once = redact(format.text);
      assert.equal(redact(once), once, format.name);
    }
  });
});
