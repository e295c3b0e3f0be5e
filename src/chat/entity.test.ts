import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { ChatClient, EntityParseError, InvalidOptionError, StructuredOutputValidationAdvisor } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';

const Doc = z.object({ title: z.string(), body: z.string() });

/** `.call().entity(schema)` on a model that answers `text` once. */
async function entityOf<S extends z.ZodType>(text: string, schema: S): Promise<z.infer<S>> {
  return ChatClient.create(mockModel([{ text }]))
    .prompt('x')
    .call()
    .entity(schema);
}

describe('entity(): finding the JSON in an answer', () => {
  test('a JSON answer whose string holds a Markdown code fence is taken whole', async () => {
    const answer = { title: 'Install', body: 'Run:\n```bash\nnpm i x\n```\nthen import it.' };
    assert.deepEqual(await entityOf(JSON.stringify(answer), Doc), answer);
    // The same, pretty-printed and fenced: the fence in the string is not the answer's fence.
    assert.deepEqual(await entityOf(`\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\``, Doc), answer);
  });

  test('a fence with any language tag, or none', async () => {
    for (const tag of ['jsonc', 'JSON', 'json5', '']) {
      assert.deepEqual(await entityOf(`Here it is:\n\`\`\`${tag}\n{"title":"a","body":"b"}\n\`\`\`\n`, Doc), { title: 'a', body: 'b' }, tag);
    }
  });

  test('of two fenced blocks, an example and then the answer, the answer is taken', async () => {
    const text = 'The format is:\n```json\n{"title":"<title>"}\n```\nSo here is mine:\n```json\n{"title":"Install","body":"Run it."}\n```';
    assert.deepEqual(await entityOf(text, Doc), { title: 'Install', body: 'Run it.' });
  });

  test('a JSON value followed by prose that holds braces', async () => {
    const Code = z.object({ code: z.string(), n: z.number() });
    assert.deepEqual(await entityOf('{"code":"a","n":1} (fields: {code, n})', Code), { code: 'a', n: 1 });
    assert.deepEqual(await entityOf('Sure! The answer is {"code":"a","n":1}.', Code), { code: 'a', n: 1 });
    assert.deepEqual(await entityOf('Sure: [1, 2, 3]', z.array(z.number())), [1, 2, 3]);
  });

  test('odd fences and prose: a fence closed on the JSON line, one never closed, one inline, a stray bracket before the answer', async () => {
    const ab = { title: 'a', body: 'b' };
    for (const text of [
      '```json\n{"title":"a","body":"b"}```',
      'Here:\n```json\n{"title":"a","body":"b"}\n',
      'Here: ```json {"title":"a","body":"b"}```',
      'See [1 for the format. Answer: {"title":"a","body":"b"}',
      '```\n[1]\n```\n\nThe answer, as asked: {"title":"a","body":"b"} (see [1])',
    ]) {
      assert.deepEqual(await entityOf(text, Doc), ab, text);
    }
  });

  test('answers made to take long to scan are refused in one pass', async () => {
    for (const text of [
      '['.repeat(500_000),
      '```\n'.repeat(200_000),
      `{"a":"${'\\"'.repeat(300_000)}`,
      '{'.repeat(200_000) + '}'.repeat(200_000),
      '[1] '.repeat(100_000),
    ]) {
      await assert.rejects(entityOf(text, Doc), EntityParseError);
    }
  });

  test('an answer with no JSON value at all is refused', async () => {
    await assert.rejects(entityOf('I cannot help with {that}.', Doc), EntityParseError);
  });
});

describe('entity(): the error does not quote the answer', () => {
  test('a syntax error is located by line and column, without the text around it', async () => {
    const text = '{\n  "user": "ann",\n  "password": hunter2!\n}';
    await assert.rejects(entityOf(text, z.object({ user: z.string(), password: z.string() })), (e: unknown) => {
      assert.ok(EntityParseError.isInstance(e));
      assert.doesNotMatch(e.message, /hunter2|assword/);
      assert.doesNotMatch(e.errors.join('\n'), /hunter2|assword/);
      assert.match(e.message, /line 3, column 15/);
      assert.equal(e.text, text, 'the text stays available to the caller');
      return true;
    });
  });

  for (const [text, problem] of [
    ['{"a": 1,}', 'expected a double-quoted property name at line 1, column 9'],
    ['{"a" 1}', "expected ':' after the property name at line 1, column 6"],
    ['{"a": 1 "b": 2}', "expected ',' or '}' at line 1, column 9"],
    ['[1, 2', 'the text ends before the JSON value does at line 1, column 6'],
    ['{"a": "x\ty"}', 'a control character (a raw line break or tab) in a string at line 1, column 9'],
    ['{"a": "\\q"}', 'a bad escape in a string at line 1, column 8'],
    ['{"a": "never closed', 'a string that is never closed at line 1, column 7'],
    ['{"a": tru}', 'expected a JSON value at line 1, column 7'],
    ['```json\n"a"\n"b"\n```', 'unexpected text after the JSON value at line 3, column 1'],
  ] as const) {
    test(`${JSON.stringify(text)}: ${problem}`, async () => {
      await assert.rejects(entityOf(text, Doc), (e: unknown) => {
        assert.ok(EntityParseError.isInstance(e));
        assert.deepEqual(e.errors, [`not valid JSON: ${problem}`]);
        return true;
      });
    });
  }

  test('keys the schema does not allow are counted, not named: the model is told them in the re-ask', async () => {
    const Strict = z.strictObject({ title: z.string() });
    await assert.rejects(entityOf('{"title": "t", "sk-live-SECRET123": 1}', Strict), (e: unknown) => {
      assert.ok(EntityParseError.isInstance(e));
      assert.doesNotMatch(e.message, /SECRET123/);
      assert.deepEqual(e.errors, ['(root): 1 key the schema does not allow']);
      return true;
    });
    const model = mockModel([{ text: '{"title": "t", "sk-live-SECRET123": 1}' }, { text: '{"title": "t"}' }]);
    const client = ChatClient.builder(model).defaultAdvisors(new StructuredOutputValidationAdvisor()).build();
    assert.deepEqual(await client.prompt('x').call().entity(Strict), { title: 't' });
    assert.match(JSON.stringify(model.doGenerateCalls[1]!.prompt.at(-1)), /sk-live-SECRET123/);
  });

  test('a short answer that is not JSON at all', async () => {
    await assert.rejects(entityOf('hunter2', Doc), (e: unknown) => {
      assert.ok(EntityParseError.isInstance(e));
      assert.doesNotMatch(e.message, /hunter2/);
      assert.match(e.message, /line 1, column 1/);
      return true;
    });
  });
});

describe('entity(): the issues listed are capped', () => {
  test('a 20,000-item invalid array lists the first 20 issues and how many more', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ id: String(i) }));
    const schema = z.array(z.object({ id: z.number(), name: z.string() }));
    await assert.rejects(entityOf(JSON.stringify(items), schema), (e: unknown) => {
      assert.ok(EntityParseError.isInstance(e));
      assert.equal(e.errors.length, 21);
      assert.equal(e.errors.at(-1), 'and 39980 more issues');
      assert.ok(e.message.length < 4_000, `message of ${e.message.length} characters`);
      return true;
    });
  });
});

describe('entity(): a schema JSON Schema cannot express', () => {
  for (const [name, schema] of [
    ['z.date()', z.object({ at: z.date() })],
    ['z.bigint()', z.object({ n: z.bigint() })],
    ['z.custom()', z.custom<string>()],
    ['z.map()', z.map(z.string(), z.string())],
    ['z.symbol()', z.symbol()],
  ] as const) {
    test(`${name}: InvalidOptionError naming the argument, before any model call`, async () => {
      const model = mockModel([{ text: '{}' }]);
      await assert.rejects(ChatClient.create(model).prompt('x').call().entity(schema), (e: unknown) => {
        assert.ok(InvalidOptionError.isInstance(e), String(e));
        assert.equal(e.option, 'entity(schema)');
        assert.match(e.message, /JSON Schema/);
        assert.match(e.message, /z\.iso\.datetime\(\)/);
        return true;
      });
      assert.equal(model.doGenerateCalls.length, 0);
    });
  }
});
