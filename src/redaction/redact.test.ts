import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REDACTED, redact, redactSecrets, redactValue } from '../index.ts';
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

  test('finds a URL right after a percent escape, as URL-encoded text holds one', () => {
    assert.equal(redact('next=%22https://user:hunter2pass@host.example.com/x'), 'next=%22https://user:[REDACTED]@host.example.com/x');
    assert.equal(redact('db%3Dpostgres://admin:s3cretpw@db:5432/app'), 'db%3Dpostgres://admin:[REDACTED]@db:5432/app');
    assert.equal(redact('u=%27https://9f86d081884c7d659a2feaa0c55ad015@github.com/o/r'), 'u=%27https://[REDACTED]@github.com/o/r');
    // A user name stays, whatever is glued to the scheme.
    assert.equal(redact('xhttps://user@host'), 'xhttps://user@host');
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

  test('redactValue judges an entry of a name and a value by its name, as the same entry in text is judged', () => {
    const env = [
      { name: 'DB_PASSWORD', value: 'Winter2024!' },
      { name: 'API_TOKEN', value: 'a8Kd92mXq0Lp3Zr7' },
      { Key: 'STRIPE_SECRET', Value: 'plainsecretvalue' },
      { name: 'LOG_LEVEL', value: 'debug' },
      { name: 'CACHE_KEY', value: 'user:42' },
    ];
    const expected = [
      { name: 'DB_PASSWORD', value: REDACTED },
      { name: 'API_TOKEN', value: REDACTED },
      { Key: 'STRIPE_SECRET', Value: REDACTED },
      { name: 'LOG_LEVEL', value: 'debug' },
      { name: 'CACHE_KEY', value: 'user:42' },
    ];
    assert.deepEqual(redactValue({ env }), { env: expected });
    // Below the depth where objects are copied, the JSON text it becomes is judged the same way.
    let deep: unknown = { env };
    for (let level = 0; level < 14; level++) deep = { child: deep };
    const text = JSON.stringify(redactValue(deep));
    for (const secret of ['Winter2024!', 'a8Kd92mXq0Lp3Zr7', 'plainsecretvalue']) assert.ok(!text.includes(secret), text);
    assert.match(text, /debug/);
  });

  test('redactValue redacts keys too, and two keys that redact alike both stay', () => {
    const tokenA = 'ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ';
    const tokenB = 'ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIK';
    const value = { 'postgres://app:Pg5ecret99@db.internal:5432/shop': 'reachable', tokens: { [tokenA]: { scopes: ['repo'] }, [tokenB]: 1 } };
    assert.deepEqual(redactValue(value), {
      'postgres://app:[REDACTED]@db.internal:5432/shop': 'reachable',
      tokens: { [REDACTED]: { scopes: ['repo'] }, [`${REDACTED} (2)`]: 1 },
    });
    let deep: unknown = value;
    for (let level = 0; level < 14; level++) deep = { child: deep };
    const text = JSON.stringify(redactValue(deep));
    for (const secret of ['Pg5ecret99', tokenA, tokenB]) assert.ok(!text.includes(secret), text);
    assert.match(text, /reachable/);
    // An own `__proto__` key of parsed JSON stays a key: it does not become the copy's prototype.
    const parsed = redactValue(JSON.parse('{"__proto__": {"password": "hunter2"}, "a": 1}')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(parsed), ['__proto__', 'a']);
    assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
    assert.equal(JSON.stringify(parsed), '{"__proto__":{"password":"[REDACTED]"},"a":1}');
  });

  test('redactValue writes what JSON.stringify would for a value with toJSON (a Date, a URL), redacted', () => {
    const value = { shippedAt: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), tracking: new URL('https://u:p4ssw0rd@track.example.com/p/123') };
    assert.deepEqual(redactValue(value), { shippedAt: '2024-01-02T03:04:05.000Z', tracking: 'https://u:[REDACTED]@track.example.com/p/123' });
    // toJSON gets the key, as from JSON.stringify; one that throws leaves the object's own properties.
    const keyed = { toJSON: (key: string) => `under ${key}` };
    const throwing = {
      toJSON: () => {
        throw new Error('no');
      },
      id: 7,
    };
    assert.deepEqual(redactValue({ keyed, list: [keyed], throwing }), {
      keyed: 'under keyed',
      list: ['under 0'],
      throwing: { toJSON: throwing.toJSON, id: 7 },
    });
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

describe('redact: passphrases of several words', () => {
  test('after a separator and a space, the value runs to the end of its line', () => {
    assert.equal(redact('password: correct horse battery staple'), 'password: [REDACTED]');
    assert.equal(redact('passphrase = my dog has fleas'), 'passphrase = [REDACTED]');
    // The next line is other text, and stays.
    assert.equal(redact('password: correct horse battery staple\nThe build passed.'), 'password: [REDACTED]\nThe build passed.');
    assert.equal(redact('db:\n  password: correct horse\n  host: db.internal'), 'db:\n  password: [REDACTED]\n  host: db.internal');
    // In JSON text a line ends at a `\n` escape.
    assert.equal(redact(JSON.stringify('password: correct horse\nnext line')), '"password: [REDACTED]\\nnext line"');
  });

  test('symbols that end a value in a URL query (& < > and closing brackets) are part of a password in this form', () => {
    for (const password of ['p@ss&w0rd', 'Abc)123def', 'S3cret]pw}9', 'Abc<de>f9']) {
      assert.equal(redact(`password: ${password}`), 'password: [REDACTED]', password);
      assert.equal(redact(`DB_PASSWORD: ${password}\nnext`), 'DB_PASSWORD: [REDACTED]\nnext', password);
    }
    // In a query or a form body (no space after `=`) `&` still starts the next field.
    assert.equal(redact('https://x.test/?password=hunter2&user=bob'), 'https://x.test/?password=[REDACTED]&user=bob');
    assert.equal(redact('password=hunter2&user=bob'), 'password=[REDACTED]&user=bob');
    // Elsewhere (a .env line, a shell variable) it is part of the secret.
    assert.equal(redact('DB_PASSWORD=p@ss&w0rd'), 'DB_PASSWORD=[REDACTED]');
    assert.equal(redact('PGPASSWORD=x9&Yz81q psql -h db'), 'PGPASSWORD=[REDACTED] psql -h db');
  });

  test("the shell's PWD is a working directory, not a password; DB_PWD and pwd still are", () => {
    assert.equal(redact('PWD=/home/ada/project\nOLDPWD=/home/ada'), 'PWD=/home/ada/project\nOLDPWD=/home/ada');
    assert.equal(redact('DB_PWD=hunter2hunter2'), 'DB_PWD=[REDACTED]');
    assert.equal(redact('pwd: hunter2hunter2'), 'pwd: [REDACTED]');
  });

  test('a bracket that closes what the text opened before the name, or a closing tag, ends the value: the rest stays', () => {
    assert.equal(
      redact('Your account is ready (password: Welcome1) and expires in 24 hours; reply STOP to cancel.'),
      'Your account is ready (password: [REDACTED]) and expires in 24 hours; reply STOP to cancel.',
    );
    assert.equal(
      redact('<p>Temporary password: Welcome1</p><p>It expires in 24 hours.</p>'),
      '<p>Temporary password: [REDACTED]</p><p>It expires in 24 hours.</p>',
    );
    assert.equal(redact('{user: bob, password: hunter2} -> status=ok latency=12ms'), '{user: bob, password: [REDACTED]} -> status=ok latency=12ms');
    assert.equal(redact('[password: hunter2] saved for user bob at 10:42'), '[password: [REDACTED]] saved for user bob at 10:42');
  });

  test('it ends at a delimiter of a key-value list, or at the next name and separator', () => {
    assert.equal(redact('user=bob, password: correct horse, host=db'), 'user=bob, password: [REDACTED], host=db');
    assert.equal(redact('password: correct horse; mode: fast'), 'password: [REDACTED]; mode: fast');
    assert.equal(redact('password: correct horse battery user: bob'), 'password: [REDACTED] user: bob');
    assert.equal(redact('secret = two words retries = 3'), 'secret = [REDACTED] retries = 3');
  });

  test('a name that only often holds a secret, a placeholder, and NAME=value without a space keep the words after them', () => {
    // Generated keys and tokens hold no spaces: what follows is other text.
    assert.equal(redact('token: Xk9mQ2vL7pZr4wT8 expires in 3600 s'), 'token: [REDACTED] expires in 3600 s');
    assert.equal(redact('primary key: id and more words'), 'primary key: id and more words');
    assert.equal(redact('password: ${DB_PASSWORD} from the environment'), 'password: ${DB_PASSWORD} from the environment');
    // The shell and env form, where an unquoted space ends the value: the command after it stays.
    assert.equal(redact('PGPASSWORD=hunter2 psql -h db -U app'), 'PGPASSWORD=[REDACTED] psql -h db -U app');
    // A first word without a letter is a count, not a passphrase.
    assert.equal(redact('tests pass: 12 of 12 passed'), 'tests pass: [REDACTED] of 12 passed');
  });

  test('an apostrophe inside a word, and a name in Markdown emphasis, as a model writes them', () => {
    assert.equal(redact("password: don't tread on me"), 'password: [REDACTED]');
    assert.equal(redact('**Password:** correct horse battery staple\n**Host:** db'), '**Password:** [REDACTED]\n**Host:** db');
    assert.equal(redact('- **API key**: Xk9mQ2vL7pZr4wT8'), '- **API key**: [REDACTED]');
    assert.equal(redact('*password*: hunter2'), '*password*: [REDACTED]');
    // A masked value stays as it is.
    assert.equal(redact('**Password:** ********'), '**Password:** ********');
  });

  test('long values of many words or escapes are read in bounded work', () => {
    const started = performance.now();
    redact(`password: ${'ab '.repeat(200_000)}`);
    redact(`password: a${"'b".repeat(200_000)}`);
    redact(`password%3D x %${'25'.repeat(200_000)}`);
    redact(`password%3D${'%2520a'.repeat(100_000)}`);
    redact(`%22password%22%3A%22${'%2522a'.repeat(100_000)}`);
    redact(`Basic ${'QUJD'.repeat(200_000)}`);
    assert.ok(performance.now() - started < 5000, 'bounded work');
  });
});

describe('redact: URL-encoded secrets', () => {
  test('an encoded name=value pair in a query string or a form body', () => {
    assert.equal(redact('password%3Dhunter2'), 'password%3D[REDACTED]');
    assert.equal(
      redact('GET /authorize?next=%2Ftoken%3Fgrant_type%3Dpassword%26username%3Dbob%26password%3Dhunter2%2521%26scope%3Dread HTTP/1.1'),
      'GET /authorize?next=%2Ftoken%3Fgrant_type%3Dpassword%26username%3Dbob%26password%3D[REDACTED]%26scope%3Dread HTTP/1.1',
    );
    // Encoded twice: the value ends at the `&` of either level.
    assert.equal(redact('?q=a%3Dlogin%2526passwd%253Dhunter2%2526b%253D1'), '?q=a%3Dlogin%2526passwd%253D[REDACTED]%2526b%253D1');
    // Unencoded, as it already was.
    assert.equal(redact('grant_type=password&username=bob&password=hunter2%21'), 'grant_type=password&username=bob&password=[REDACTED]');
  });

  test('an encoded JSON body: the name in encoded quotes, the value up to its closing quote', () => {
    assert.equal(redact('body=%7B%22api_key%22%3A%22Xk9mQ2vL7pZr4wT8%22%2C%22q%22%3A1%7D'), 'body=%7B%22api_key%22%3A%22[REDACTED]%22%2C%22q%22%3A1%7D');
    assert.equal(redact('d=%7B%22password%22%3A%20%22two%20words%22%7D'), 'd=%7B%22password%22%3A%20%22[REDACTED]%22%7D');
  });

  test('a token right after a percent escape is found by its shape', () => {
    const token = 'sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c';
    assert.equal(redact(`q=%22${token}%22`), 'q=%22[REDACTED]%22');
    assert.equal(redact('h=Authorization%3A%20Bearer%209f86d081884c7d659a2feaa0c55ad015'), 'h=Authorization%3A%20Bearer%20[REDACTED]');
  });

  test('encoded text without a secret stays', () => {
    for (const text of [
      'GET /cb?redirect=https%3A%2F%2Fexample.com%2Fdocs%3Fpage%3D2%26sort%3Dname&state=ok',
      'q=cache_key%3Duser%3A1234%3Aprofile%26max_tokens%3D1000%26sort_key%3Dcreated_at',
      'at=2024-05-01T10%3A00%3A00Z&path=%2Fhome%2Fdev%2Fsrc%2Fauth%2Ftoken-store.ts',
    ]) {
      assert.equal(redact(text), text);
    }
  });
});

describe('redact: base64-wrapped credentials and URL userinfo', () => {
  test('Basic credentials are found by what they decode to, not only by their characters', () => {
    // base64 of `user:pass`: letters only, which prose could also be.
    assert.equal(redact('Basic dXNlcjpwYXNz'), 'Basic [REDACTED]');
    assert.equal(redact('proxy_auth: basic dXNlcjpwYXNz'), 'proxy_auth: basic [REDACTED]');
    assert.equal(redact('upstream: Basic YTpi'), 'upstream: Basic [REDACTED]');
    assert.equal(redact('Authorization: Basic dXNlcjpodW50ZXIy'), 'Authorization: Basic [REDACTED]');
    assert.equal(redact('GET /x?upstream=Basic%20dXNlcjpwYXNz&y=1'), 'GET /x?upstream=Basic%20[REDACTED]&y=1');
    // Words that are no base64 of a `user:password`.
    for (const prose of ['Basic authentication works; Basic Auth next.', 'Basic idea: keep it simple.', 'Basic usage of the Basic settings page']) {
      assert.equal(redact(prose), prose);
    }
  });

  test('a URL whose user is a token loses the token, with a password or without', () => {
    assert.equal(redact('git clone https://9f86d081884c7d659a2feaa0c55ad015@github.com/o/r.git'), 'git clone https://[REDACTED]@github.com/o/r.git');
    assert.equal(redact('https://user:pass@host/x and https://user:pass@host'), 'https://user:[REDACTED]@host/x and https://user:[REDACTED]@host');
    assert.equal(redact('https://9f86d081884c7d659a2feaa0c55ad015:x-oauth-basic@github.com/o/r.git'), 'https://[REDACTED]:[REDACTED]@github.com/o/r.git');
    // A user name is no secret.
    for (const text of ['ssh://git@github.com/o/r.git', 'https://deploy-bot@ci.example.com/x', 'ftp://anonymous@ftp.example.com']) {
      assert.equal(redact(text), text);
    }
  });

  test('a URL glued to a word of any length, or to an underscore, still loses its password', () => {
    const long = 'a'.repeat(40);
    const cases: Array<[string, string]> = [
      [`see ${long}https://user:hunter2pass@db.example.com/x`, `see ${long}https://user:${REDACTED}@db.example.com/x`],
      [`path=/tmp/${long}postgres://admin:S3cretPw@h/db`, `path=/tmp/${long}postgres://admin:${REDACTED}@h/db`],
      [`log:${'b'.repeat(33)}redis://:pw12345678@cache:6379`, `log:${'b'.repeat(33)}redis://:${REDACTED}@cache:6379`],
      [`${long}mongodb+srv://app:Mg0Pass-x@cluster0.example.net/db`, `${long}mongodb+srv://app:${REDACTED}@cluster0.example.net/db`],
      [`${'q'.repeat(200)}amqp://guest:guestpw@rabbit:5672`, `${'q'.repeat(200)}amqp://guest:${REDACTED}@rabbit:5672`],
      // The password may hold `@` and `/` as anywhere else.
      [`${long}mysql://root:sl4sh/in@Pw@db:3306/shop`, `${long}mysql://root:${REDACTED}@db:3306/shop`],
      // Joined by `_`, a word character, as names join words.
      ['DB_URL_postgres://app:s3cret@db:5432/x', `DB_URL_postgres://app:${REDACTED}@db:5432/x`],
      // Percent escapes before the word, as URL-encoded text has them.
      [`next=%22%2F${long}https://user:hunter2pass@host.example.com/x`, `next=%22%2F${long}https://user:${REDACTED}@host.example.com/x`],
      [`q=${'%2F'.repeat(20)}${long}redis://:Rd1sPassw0rd@cache:6379/0`, `q=${'%2F'.repeat(20)}${long}redis://:${REDACTED}@cache:6379/0`],
      // A user that looks generated is a token there too.
      [`${long}https://9f86d081884c7d659a2feaa0c55ad015@github.com/o/r.git`, `${long}https://${REDACTED}@github.com/o/r.git`],
    ];
    for (const [text, expected] of cases) {
      assert.equal(redact(text), expected, text);
      assert.equal(redactSecrets(text), expected, text);
    }
    // A user name stays, whatever is glued before its scheme.
    assert.equal(redact(`${long}ssh://git@github.com/o/r.git`), `${long}ssh://git@github.com/o/r.git`);
  });
});

describe('redact: secret names in other languages and scripts', () => {
  test('the word for password in other languages names a secret', () => {
    const cases: Array<[string, string]> = [
      ['contraseña: hunter2', 'contraseña: [REDACTED]'],
      ['mot de passe: hunter2', 'mot de passe: [REDACTED]'],
      ['mot_de_passe=hunter2', 'mot_de_passe=[REDACTED]'],
      ['Passwort=hunter2', 'Passwort=[REDACTED]'],
      ['Kennwort: hunter2', 'Kennwort: [REDACTED]'],
      ['senha: hunter2', 'senha: [REDACTED]'],
      ['пароль: hunter2', 'пароль: [REDACTED]'],
      ['Пароль: hunter2', 'Пароль: [REDACTED]'],
      ['密码：hunter2', '密码：[REDACTED]'],
      ['数据库密码: hunter2', '数据库密码: [REDACTED]'],
      ['密碼: hunter2', '密碼: [REDACTED]'],
      ['パスワード: hunter2', 'パスワード: [REDACTED]'],
      ['パスワード：hunter2', 'パスワード：[REDACTED]'],
      ['비밀번호: hunter2', '비밀번호: [REDACTED]'],
    ];
    for (const [text, expected] of cases) assert.equal(redact(text), expected, text);
    // A passphrase after a full-width colon runs to the end of its line or a full-width delimiter.
    assert.equal(redact('密码：correct horse battery，请妥善保管'), '密码：[REDACTED]，请妥善保管');
    assert.deepEqual(redactValue({ пароль: 'hunter2', contraseña: 'hunter2', имя: 'Анна' }), { пароль: '[REDACTED]', contraseña: '[REDACTED]', имя: 'Анна' });
  });

  test('prose that names a password in another language, with no value, stays', () => {
    for (const text of [
      'La contraseña debe tener al menos 8 caracteres.',
      'Mot de passe oublié ? Cliquez ici.',
      'Das Passwort ist abgelaufen.',
      'Пароль должен содержать не менее 8 символов.',
      '密码必须至少包含8个字符。',
      'パスワードを忘れた場合',
      'Hinweis: Passwort ändern',
    ]) {
      assert.equal(redact(text), text);
    }
  });
});

describe('redact: linear time on any input', () => {
  // Each of these took from seconds to minutes before, blocking the event loop: a rule read the rest of a long
  // word again from each name, scheme or backslash in it. A return to that runs past the suite's timeout.
  const KB = 1024;
  const repeated = (unit: string, bytes = 128 * KB) => unit.repeat(Math.ceil(bytes / unit.length));
  const RANDOM = 'A1b2C3d4E5f6G7h8';

  test('a long word of names with separators is read once', () => {
    for (const unit of ['key=', 'token:', 'apiKey：', 'auth%3D', 'token%253Da', '--key=a']) {
      const text = repeated(unit);
      assert.ok(redact(text) === text, unit);
      // A secret at its end is still found, with the few names before it whose values it makes look generated.
      const out = redact(`${text}${RANDOM}`);
      const kept = out.slice(0, -REDACTED.length);
      assert.ok(out.endsWith(REDACTED) && text.startsWith(kept) && kept.length > text.length - 1024, `${unit}: …${out.slice(-80)}`);
    }
  });

  test('schemes and scheme-like words without a password are read once', () => {
    for (const unit of ['x://', 'x://a:', 'a.', 'a-', '-p', 'secret-']) {
      const text = repeated(unit);
      assert.ok(redact(`${text}. password=hunter2`) === `${text}. password=${REDACTED}`, unit);
    }
    // Glued URLs still lose each password.
    assert.equal(redact('https://u:p1@h.com/https://v:p2@g.com/'), `https://u:${REDACTED}@h.com/https://v:${REDACTED}@g.com/`);
    assert.equal(redact('https://u:p@ss@h.com/x'), `https://u:${REDACTED}@h.com/x`);
  });

  test('schemes after long words, and colons and at signs between them, are read once', () => {
    // Each `://` after a word longer than any scheme, or with the start of a user and password after it and no host.
    for (const unit of [`${'a'.repeat(40)}x://`, 'a://:', 'a://:@', 'a://u:p@', `${'a'.repeat(40)}x://u:p@@`]) {
      const text = repeated(unit, 64 * KB);
      assert.ok(redact(`${text} password=hunter2`) === `${text} password=${REDACTED}`, unit);
    }
    // A password at its end is still found. Read from the `://` before, `//u:hunter2` is the password (one may start
    // with `//`), so the user goes with it.
    const text = repeated(`${'a'.repeat(40)}x://`, 64 * KB);
    assert.ok(redact(`${text}u:hunter2@db.example.com/x`) === `${text.slice(0, -3)}:${REDACTED}@db.example.com/x`);
  });

  test('the words the command-line, keyword and list forms start at are read once', () => {
    // `mysql mysql …` read the rest of the command again from each name: 370 ms for 64 KB, the square of it for more.
    const cases: Array<[string, string, string]> = [
      ['mysql ', '\nmysql -pHunter2x', `\nmysql -p${REDACTED}`],
      ['sshpass ', '\nsshpass -p hunter2 ssh h', `\nsshpass -p ${REDACTED} ssh h`],
      ['docker login ', '\ndocker login -p hunter2 r', `\ndocker login -p ${REDACTED} r`],
      ['redis-cli ', '\nredis-cli -a hunter2 ping', `\nredis-cli -a ${REDACTED} ping`],
      ['password is ', '\nthe password is hunter2', `\nthe password is ${REDACTED}`],
      ["PASSWORD 'a''", "\nALTER ROLE a PASSWORD 'hunter2';", `\nALTER ROLE a PASSWORD '${REDACTED}';`],
      ['IDENTIFIED BY ', "\nIDENTIFIED BY 'hunter2'", `\nIDENTIFIED BY '${REDACTED}'`],
      ['machine a login b ', '\nmachine h login b password hunter2', `\nmachine h login b password ${REDACTED}`],
      ['name: password\n', '\n- name: DB_PASSWORD\n  value: hunter2', `\n- name: DB_PASSWORD\n  value: ${REDACTED}`],
      ['key [x]: ', '\nkey [x]: Xk9mQ2vL7pZr4wT8', `\nkey [x]: ${REDACTED}`],
      ['AKIAIOSFODNN7EXAMPLE,', '\nAKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vT3kLmN', `\n${REDACTED},${REDACTED}`],
      ['x-pw ', '\nrun -pw hunter2', `\nrun -pw ${REDACTED}`],
    ];
    for (const [unit, tail, expectedTail] of cases) {
      const text = repeated(unit, 256 * KB);
      const started = performance.now();
      const out = redact(`${text}${tail}`);
      const ms = performance.now() - started;
      assert.ok(ms < 1000, `${JSON.stringify(unit)}: ${ms.toFixed(0)} ms`);
      assert.ok(out.endsWith(expectedTail), `${JSON.stringify(unit)}: …${out.slice(-80)}`);
    }
  });

  test('runs of backslashes are read once', () => {
    const backslashes = repeated('\\');
    assert.equal(redact(`password=${backslashes}`), `password=${REDACTED}`);
    assert.equal(redact(`password: a ${backslashes}`), `password: ${REDACTED}`);
    assert.ok(redact(`key=${backslashes} password=hunter2`) === `key=${backslashes} password=${REDACTED}`);
    // A backslash before a quote still ends a value; one before anything else is part of it.
    assert.equal(redact('{\\"password\\": \\"hunter2\\"}'), `{\\"password\\": \\"${REDACTED}\\"}`);
    assert.equal(redact('password=a\\b\\\\c end'), `password=${REDACTED} end`);
  });

  test('a long value is judged by its start and redacted whole', () => {
    const token = 'Zq8xR2mK9vB4nT7wY1cF6hJ3pL5sD0gA'.repeat(8);
    assert.equal(redact(`token=${token} next`), `token=${REDACTED} next`);
    assert.equal(redact(`api_key%3D${token}&x=1`), `api_key%3D${REDACTED}&x=1`);
    // A long value that reads as words stays, however long.
    const path = `${'projects/alpha/locations/global/'.repeat(8)}keys`;
    assert.equal(redact(`key=${path}`), `key=${path}`);
  });
});

describe('redact: credentials written without a name and a separator', () => {
  const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vT3kLmN';

  test('an AWS secret access key right after its key id, as the console credentials CSV has it', () => {
    assert.equal(redact(`AKIAIOSFODNN7EXAMPLE,${AWS_SECRET}`), `${REDACTED},${REDACTED}`);
    const csv = `User name,Password,Access key ID,Secret access key,Console login link\nci,,AKIAIOSFODNN7EXAMPLE,${AWS_SECRET},https://acct.signin.aws.amazon.com/console`;
    assert.equal(
      redact(csv),
      `User name,Password,Access key ID,Secret access key,Console login link\nci,,${REDACTED},${REDACTED},https://acct.signin.aws.amazon.com/console`,
    );
    assert.equal(redact(`AKIAIOSFODNN7EXAMPLE\t${AWS_SECRET}`), `${REDACTED}\t${REDACTED}`);
    // A git SHA after a key id is no secret key: it has no capital letter.
    assert.equal(redact('AKIAIOSFODNN7EXAMPLE 9fceb02d0ae598e95dc970b74767f19372d61af8'), `${REDACTED} 9fceb02d0ae598e95dc970b74767f19372d61af8`);
  });

  test('the prompts of aws configure, with the default in brackets', () => {
    const session = [
      'AWS Access Key ID [None]: AKIAIOSFODNN7EXAMPLE',
      `AWS Secret Access Key [None]: ${AWS_SECRET}`,
      'Default region name [None]: us-east-1',
      'Default output format [None]: json',
    ].join('\n');
    assert.equal(
      redact(session),
      `AWS Access Key ID [None]: ${REDACTED}\nAWS Secret Access Key [None]: ${REDACTED}\nDefault region name [None]: us-east-1\nDefault output format [None]: json`,
    );
    assert.equal(redact(`AWS Secret Access Key [****************kLmN]: ${AWS_SECRET}`), `AWS Secret Access Key [****************kLmN]: ${REDACTED}`);
    assert.equal(redact('Enter password [none]: hunter2'), `Enter password [none]: ${REDACTED}`);
  });

  test('a .netrc entry, on one line or several', () => {
    assert.equal(redact('machine db.example.com login app password S3cr3t-pw'), `machine db.example.com login app password ${REDACTED}`);
    assert.equal(
      redact('machine api.example.com\n  login me@example.com\n  password hunter2\nmachine other.example.com login bob password pw2'),
      `machine api.example.com\n  login me@example.com\n  password ${REDACTED}\nmachine other.example.com login bob password ${REDACTED}`,
    );
    assert.equal(redact('machine h.example.com password hunter2 login app'), `machine h.example.com password ${REDACTED} login app`);
    assert.equal(redact('default login anonymous password me@example.com'), `default login anonymous password ${REDACTED}`);
    // Prose that names a machine, a login and a password.
    for (const text of ['the machine learning login page has a password field', 'a default password is set at login']) {
      assert.equal(redact(text), text);
    }
  });

  test('a password in an SQL statement', () => {
    const cases: Array<[string, string]> = [
      ["ALTER USER app WITH PASSWORD 'S3cr3t-pw';", `ALTER USER app WITH PASSWORD '${REDACTED}';`],
      [
        "CREATE USER app WITH ENCRYPTED PASSWORD 'S3cr3t-pw' VALID UNTIL 'infinity';",
        `CREATE USER app WITH ENCRYPTED PASSWORD '${REDACTED}' VALID UNTIL 'infinity';`,
      ],
      ["create role reader login password 'it''s-a-pw';", `create role reader login password '${REDACTED}';`],
      ["CREATE USER 'app'@'%' IDENTIFIED BY 'S3cr3t-pw';", `CREATE USER 'app'@'%' IDENTIFIED BY '${REDACTED}';`],
      [
        "ALTER USER 'app'@'localhost' IDENTIFIED WITH mysql_native_password BY 'S3cr3t-pw';",
        `ALTER USER 'app'@'localhost' IDENTIFIED WITH mysql_native_password BY '${REDACTED}';`,
      ],
      ['CREATE USER scott IDENTIFIED BY "Tiger-pw1";', `CREATE USER scott IDENTIFIED BY "${REDACTED}";`],
      ["SET PASSWORD FOR 'app'@'%' = 'S3cr3t-pw';", `SET PASSWORD FOR 'app'@'%' = '${REDACTED}';`],
      // In JSON text, as a tool call's arguments hold it.
      [JSON.stringify({ sql: "ALTER ROLE app PASSWORD 'S3cr3t-pw'" }), `{"sql":"ALTER ROLE app PASSWORD '${REDACTED}'"}`],
    ];
    for (const [text, expected] of cases) assert.equal(redact(text), expected, text);
    for (const text of ['ALTER ROLE app PASSWORD NULL;', 'the issue identified by the reviewer', 'SELECT password FROM users WHERE id = 1']) {
      assert.equal(redact(text), text);
    }
  });

  test('redis-cli -a, and the flags of other clients', () => {
    assert.equal(redact('redis-cli -h cache -a R3dPw-q9Zk ping'), `redis-cli -h cache -a ${REDACTED} ping`);
    assert.equal(redact("valkey-cli -a 'R3dPw q9Zk' --no-auth-warning info"), `valkey-cli -a '${REDACTED}' --no-auth-warning info`);
    assert.equal(redact('redis-cli -h cache --user app --pass R3dPw-q9Zk ping'), `redis-cli -h cache --user app --pass ${REDACTED} ping`);
    assert.equal(redact('mysql -uroot -pSecret shop'), `mysql -uroot -p${REDACTED} shop`);
    assert.equal(redact('mysql --password=Secret shop'), `mysql --password=${REDACTED} shop`);
    // -a of other commands is no password.
    for (const text of ['cp -a src dst && git commit -a -m wip', 'redis-cli -h cache ping; ls -a /tmp']) assert.equal(redact(text), text);
  });

  test('a Kubernetes env list: the value after a name that names a secret', () => {
    assert.equal(
      redact('env:\n  - name: DB_PASSWORD\n    value: "S3cr3t-pw"\n  - name: LOG_LEVEL\n    value: debug'),
      `env:\n  - name: DB_PASSWORD\n    value: "${REDACTED}"\n  - name: LOG_LEVEL\n    value: debug`,
    );
    assert.equal(redact('- name: DB_PASSWORD\n  value: S3cr3t-pw'), `- name: DB_PASSWORD\n  value: ${REDACTED}`);
    assert.equal(
      redact('"env": [{"name": "API_TOKEN", "value": "Xk9mQ2vL7pZr4wT8"}, {"name": "MAX_TOKENS", "value": "1000"}]'),
      `"env": [{"name": "API_TOKEN", "value": "${REDACTED}"}, {"name": "MAX_TOKENS", "value": "1000"}]`,
    );
    assert.equal(redact('[{"key":"DB_PASS","value":"hunter2"}]'), `[{"key":"DB_PASS","value":"${REDACTED}"}]`);
    assert.equal(
      redact(JSON.stringify({ manifest: '- name: DB_PASSWORD\n  value: "S3cr3t-pw"' })),
      `{"manifest":"- name: DB_PASSWORD\\n  value: \\"${REDACTED}\\""}`,
    );
    // A value taken from a secret names no value.
    const fromSecret = '- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}';
    assert.equal(redact(fromSecret), fromSecret);
  });

  test('a password in a sentence, when the value looks like one', () => {
    const cases: Array<[string, string]> = [
      ['the db password is S3cr3t-pw', `the db password is ${REDACTED}`],
      ['The password was hunter2.', `The password was ${REDACTED}.`],
      ['the password is: S3cr3t-pw, keep it safe', `the password is: ${REDACTED}, keep it safe`],
      ['The default password is "admin".', `The default password is "${REDACTED}".`],
      ['the root password is now P@ssw0rd!', `the root password is now ${REDACTED}`],
      ['the password for app is S3cr3t-pw', `the password for app is ${REDACTED}`],
      ['the password was changed to S3cure!pass', `the password was changed to ${REDACTED}`],
      ['the API token is Xk9mQ2vL7pZr4wT8', `the API token is ${REDACTED}`],
      // In JSON text: an escaped quote stays escaped, and an escaped line break ends the value.
      [JSON.stringify({ m: 'the password is "admin" now' }), `{"m":"the password is \\"${REDACTED}\\" now"}`],
      [JSON.stringify({ m: 'the password is hunter2\nnext' }), `{"m":"the password is ${REDACTED}\\nnext"}`],
    ];
    for (const [text, expected] of cases) assert.equal(redact(text), expected, text);
    for (const text of [
      'the password is incorrect',
      'password is required',
      'Password is too short (at least 8 characters).',
      'The password was reset; the token is expired.',
      'the password is stored as a bcrypt hash',
      'the password is sha256-hashed and salted',
      'the password is OAuth2-based, the token is 2FA-protected and the secret is k8s-managed',
      'the password is DB_PASSWORD from the environment',
      'the password is ${DB_PASSWORD} and the secret is 42',
      'The key is that the cache key is user:1234:profile.',
      'the password is [REDACTED]',
    ]) {
      assert.equal(redact(text), text);
    }
  });

  test('a secret word at the end of a longer word is no flag', () => {
    // Read as the flag `-pw`, the word after a password was taken for it, and the password stayed.
    assert.equal(redact('S3cr3t-pw to'), 'S3cr3t-pw to');
    assert.equal(redact('--dir: /nonexistent/S3cr3t-pw does not exist'), '--dir: /nonexistent/S3cr3t-pw does not exist');
    assert.equal(redact('build my-secret now, then db.password-file stays'), 'build my-secret now, then db.password-file stays');
    // A flag is still a flag, at the start of a word, a line or an escaped line.
    assert.equal(redact('run -pw hunter2'), `run -pw ${REDACTED}`);
    assert.equal(redact('"cmd": "deploy\\n--password hunter2"'), `"cmd": "deploy\\n--password ${REDACTED}"`);
  });
});
