import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ArgsFingerprinter, IdentityKeyMatcher, canonicalJson, compareFingerprints, fieldPrints, packSketch, unpackSketch, type FieldPrint } from './index.ts';

const fp = new ArgsFingerprinter();
const sim = (a: unknown, b: unknown) => compareFingerprints(fp.fingerprint(a), fp.fingerprint(b));

describe('argument similarity', () => {
  test('identical arguments score 1 whatever the key order', () => {
    assert.equal(sim({ a: 1, b: 'x' }, { b: 'x', a: 1 }), 1);
  });

  test('a fingerprint is the same whatever the key order, with few fields or many', () => {
    const wide = new ArgsFingerprinter(undefined, { maxFields: 64 });
    for (const count of [3, 12, 40]) {
      const entries = Array.from({ length: count }, (_, i) => [`k${String((i * 7) % count).padStart(2, '0')}`, i < 2 ? `note number ${i} with words` : i]);
      const forward = Object.fromEntries(entries);
      const backward = Object.fromEntries(entries.toReversed());
      assert.deepEqual(wide.fingerprint(backward), wide.fingerprint(forward), `${count} fields`);
      const paths = fieldPrints(wide.fingerprint(forward)).map(([path]) => path);
      assert.deepEqual(paths, paths.toSorted(), `${count} fields are kept in path order`);
      assert.equal(paths.length, count);
    }
  });

  test('each free-text field keeps its own tokens when a call has several', () => {
    const texts = {
      a: 'deploy the billing service to staging',
      b: 'rotate the credentials of the reporting job',
      c: '東京の天気を調べてください',
      d: 'x'.repeat(3000),
    };
    const together = fieldPrints(fp.fingerprint(texts));
    const alone = Object.entries(texts).map(([key, text]) => fieldPrints(fp.fingerprint({ [key]: text }))[0]);
    assert.deepEqual(together, alone);
  });

  test('a JSON string is parsed and compared field by field with an object', () => {
    assert.equal(sim('{"query":"weather in paris","limit":5}', { limit: 5, query: 'weather in paris' }), 1);
  });

  test('identity fields are compared exactly: page 2 is not page 1', () => {
    assert.equal(sim({ query: 'open issues', page: 1 }, { query: 'open issues', page: 2 }), 0);
    assert.equal(sim({ cursor: 'abc' }, { cursor: 'abd' }), 0);
  });

  test('a different file path, id or date makes a different call', () => {
    assert.equal(sim({ path: 'src/a.ts', mode: 'read' }, { path: 'src/b.ts', mode: 'read' }), 0);
    assert.equal(sim({ order_id: '#W1', detail: 'full' }, { order_id: '#W2', detail: 'full' }), 0);
    assert.equal(sim({ origin: 'ATL', destination: 'LAS', date: '2024-05-20' }, { origin: 'ATL', destination: 'LAS', date: '2024-05-21' }), 0);
    assert.equal(sim({ userId: 'u1' }, { userId: 'u2' }), 0, 'camelCase *Id is an identity key');
  });

  test('ids inside arrays keep their identity', () => {
    assert.equal(sim({ item_ids: ['1', '2'] }, { item_ids: ['1', '3'] }), 0);
  });

  test('free-text fields are compared by tokens: slight rewording stays similar', () => {
    const s = sim({ query: 'spring boot throughput benchmark results' }, { query: 'spring boot benchmark throughput results latest' });
    assert.ok(s >= 0.8 && s < 1, `similarity ${s}`);
  });

  test('one changed scalar among many leaves the call near-identical', () => {
    const a = { user: 'amy', cabin: 'economy', seats: 2, pay: 'card', insurance: 'no' };
    const s = sim(a, { ...a, insurance: 'yes' });
    assert.equal(s, 0.8);
  });

  test('Japanese arguments that differ are different; identical ones are identical', () => {
    assert.ok(sim({ query: '東京の天気を教えて' }, { query: '大阪の人口を教えて' }) < 0.5);
    assert.equal(sim({ query: '東京の天気を教えて' }, { query: '東京の天気を教えて' }), 1);
    assert.ok(sim('東京の天気を教えて', '大阪の人口を教えて') < 0.5, 'also as free text');
  });

  test('free-text commands: numbers and paths on the first line are identity', () => {
    assert.equal(sim('open file.py 120', 'open file.py 220'), 0);
    assert.equal(sim('goto 300', 'goto 400'), 0);
    assert.equal(sim('open a.py', 'open b.py'), 0);
    assert.equal(sim('scroll_down', 'scroll_down'), 1);
    // Only the first line names what the command acts on; the body is compared by its tokens.
    assert.equal(sim('edit 2:2 decrypt.py\nbody 1 2 3', 'edit 2:2 decrypt.py\nbody 4 5 6') > 0, true);
    assert.equal(sim('edit 2:2 decrypt.py\nbody', 'edit 3:3 decrypt.py\nbody'), 0);
  });

  test('free-text commands with the same head compare their bodies by tokens', () => {
    const s = sim('edit 10:12\nreturn a + b\nend_of_edit', 'edit 10:12\nreturn a + b + c\nend_of_edit');
    assert.ok(s > 0.8 && s < 1, `similarity ${s}`);
  });

  test('extra identity keys can be configured', () => {
    const custom = new ArgsFingerprinter(new IdentityKeyMatcher(['ticker']));
    const a = custom.fingerprint({ ticker: 'AAPL', range: '1d' });
    const b = custom.fingerprint({ ticker: 'MSFT', range: '1d' });
    assert.equal(compareFingerprints(a, b), 0);
  });

  test('long free text: a change anywhere breaks identity, and the middle counts as much as the ends', () => {
    const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${(i * 7919) % 5000}`).join(' ');
    const body = words('a', 3000);
    const edited = `${body.slice(0, 9000)} inserted ${body.slice(9000)}`;
    assert.equal(sim({ content: body }, { content: body }), 1);
    assert.notEqual(fp.fingerprint({ content: body }).h, fp.fingerprint({ content: edited }).h, 'one word in the middle is not identical');
    assert.ok(sim({ content: body }, { content: edited }) >= 0.9, 'but it is near-identical');
    const framed = `${body.slice(0, 500)} ${words('b', 3000)} ${body.slice(-500)}`;
    assert.ok(sim({ content: body }, { content: framed }) < 0.5, 'a shared start and end alone is not similar');
  });

  test('fingerprints stay small for huge arguments', () => {
    const big = { content: 'lorem ipsum dolor '.repeat(1000) + Array.from({ length: 500 }, (_, i) => `w${i}`).join(' ') };
    const print = fp.fingerprint(big);
    assert.ok(JSON.stringify(print).length < 1000, `${JSON.stringify(print).length} chars`);
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
    assert.ok(fieldPrints(fp.fingerprint(wide)).length <= 24);
  });

  test('fields are kept packed in one JSON-safe string and unpack to their paths, kinds and values', () => {
    const print = fp.fingerprint({ path: 'src/a.ts', mode: 'read', 'odd|key': 'x', query: 'open issues about the login page' });
    assert.equal(typeof print.f, 'string');
    assert.equal(JSON.stringify(print.f), `"${print.f as string}"`);
    const fields = fieldPrints(print);
    assert.deepEqual(
      fields.map(([path, kind]) => [path, kind]),
      [
        ['mode', 'v'],
        ['odd!key', 'v'],
        ['path', 'i'],
        ['query', 't'],
      ],
    );
    assert.equal(unpackSketch(fields[3]![2] as string).length, 6);
  });

  test('fingerprints whose fields older versions stored as arrays compare as packed ones', () => {
    const a = fp.fingerprint({ query: 'spring boot throughput benchmark results', path: 'src/a.ts' });
    const b = fp.fingerprint({ query: 'spring boot benchmark throughput results latest', path: 'src/a.ts' });
    const legacy = (print: typeof a) => ({
      h: print.h,
      f: fieldPrints(print).map(([p, k, v]): FieldPrint => [p, k, typeof v === 'string' ? unpackSketch(v) : v]),
    });
    assert.equal(compareFingerprints(legacy(a), b), compareFingerprints(a, b));
    assert.equal(compareFingerprints(legacy(a), legacy(b)), compareFingerprints(a, b));
    assert.ok(compareFingerprints(a, b) > 0.5 && compareFingerprints(a, b) < 1);
    const other = fp.fingerprint({ query: 'spring boot throughput benchmark results', path: 'src/b.ts' });
    assert.equal(compareFingerprints(legacy(a), other), 0);
    assert.equal(packSketch(unpackSketch(fieldPrints(a)[1]![2] as string)), fieldPrints(a)[1]![2]);
  });
});

describe('canonicalJson', () => {
  test('is JSON.stringify with sorted keys for plain values', () => {
    const value = { b: 1, a: [{ d: 2, c: undefined }, undefined, 'x'], e: null, f: () => 1, g: new Date(0), h: Number.NaN };
    assert.equal(canonicalJson(value), '{"a":[{"d":2},null,"x"],"b":1,"e":null,"g":"1970-01-01T00:00:00.000Z","h":null}');
    assert.equal(canonicalJson({ k: 'x'.repeat(100) }, 20), '{"k":"xxxxxxxxxxxxxx');
  });

  test('writes arguments nested thousands deep, or holding a cycle, without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { a: [deep] };
    assert.match(canonicalJson(deep, 1000), /^\{"a":\[\{"a":\[.*"…"/);
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle['self'] = cycle;
    assert.equal(canonicalJson(cycle, 100).length, 100);
    const printer = new ArgsFingerprinter();
    assert.equal(typeof printer.fingerprint(deep).h, 'number');
    assert.equal(printer.fingerprint(cycle).h, printer.fingerprint(cycle).h);
  });
});

describe('arguments whose size is not bounded by their text', () => {
  test('binary data is one field, read in bounded time whatever its size', () => {
    const big = Buffer.alloc(20 * 1024 * 1024, 7);
    const start = performance.now();
    const print = fp.fingerprint({ mode: 'append', data: big });
    fp.fingerprint(new Uint8Array(big.buffer, big.byteOffset, big.byteLength));
    fp.fingerprint({ data: big.buffer });
    assert.ok(performance.now() - start < 500, `took ${performance.now() - start} ms`);
    assert.deepEqual(
      fieldPrints(print).map(([path, kind]) => [path, kind]),
      [
        ['data', 'v'],
        ['mode', 'v'],
      ],
    );
  });

  test('binary data: the same bytes are the same call; other bytes, anywhere, or another size are another', () => {
    const a = Buffer.alloc(100_000, 1);
    const changedMiddle = Buffer.from(a);
    changedMiddle.fill(2, 40_000, 60_000);
    assert.equal(sim({ data: a }, { data: Buffer.from(a) }), 1);
    assert.notEqual(fp.fingerprint({ data: a }).h, fp.fingerprint({ data: changedMiddle }).h);
    assert.notEqual(fp.fingerprint({ data: a }).h, fp.fingerprint({ data: a.subarray(1) }).h);
    assert.notEqual(fp.fingerprint(Buffer.from('abc')).h, fp.fingerprint(Buffer.from('abd')).h);
  });

  test('a huge sparse array stops at the field limit; ordinary arguments keep the fingerprints earlier versions gave them', () => {
    const start = performance.now();
    fp.fingerprint({ rows: new Array(100_000_000) });
    assert.ok(performance.now() - start < 500, `took ${performance.now() - start} ms`);
    // Walking arrays and objects only up to the limit must not change what is walked: stored sessions compare with new calls.
    assert.deepEqual(fp.fingerprint({ path: 'src/a.ts', query: 'find the bug in the parser', limit: 5 }), {
      h: 8953324900471924,
      f: 'limit|vfBTS3path|ikmI#Kquery|t5iFAw*]P3rR?A-<a',
    });
    assert.deepEqual(fp.fingerprint({ items: [1, 2, { id: 'x', tags: [] }], opts: {} }), {
      h: 5745484063487069,
      f: 'items.0|vgZ{o4items.1|vhW(+qitems.2.id|i@r#ITitems.2.tags|vBqu<jopts|vraSM=',
    });
    assert.deepEqual(fp.fingerprint('{"cmd":"ls -la","cwd":"/tmp"}'), { h: 426726281786382, f: 'cmd|t2kDDoA=cwd|vdE)s.' });
    // Keys beyond ASCII are packed another way than ASCII ones, to the same form.
    assert.deepEqual(fp.fingerprint({ chemin_fichier: 'src/é.ts', requête: 'trouve le bogue dans l’analyseur', größe: 5 }), {
      h: 7274473397578707,
      f: 'chemin_fichier|v+?p{Mgröße|vfBTS3requête|t6e+JlO?sOw=56=.I^Tq',
    });
    // One file however its path is spelled, and the same print as before for any spelling.
    assert.deepEqual(fp.fingerprint({ path: './src//a.ts/' }), { h: 5673838625810120, f: 'path|ikmI#K' });
    assert.deepEqual(fp.fingerprint({ path: 'src/a.ts' }), fp.fingerprint({ path: './src//a.ts/' }));
    assert.deepEqual(fp.fingerprint({ path: '/a/./b' }), fp.fingerprint({ path: '/a/b' }));
  });

  test('binary data nested past the depth the fields are walked to is written as its print', () => {
    let deep: unknown = { data: Buffer.alloc(10 * 1024 * 1024, 3) };
    for (let i = 0; i < 10; i++) deep = { next: deep };
    const start = performance.now();
    fp.fingerprint(deep);
    assert.ok(performance.now() - start < 500, `took ${performance.now() - start} ms`);
    assert.match(canonicalJson({ b: Buffer.from('hi') }), /^\{"b":"bytes:2:\d+"\}$/);
  });
});
