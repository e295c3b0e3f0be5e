import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool, type ModelMessage } from 'ai';
import type { ToolResultOutput } from '@ai-sdk/provider-utils';
import { z } from 'zod';
import {
  ChatClient,
  CONVERSATION_ID,
  EntityParseError,
  redactSecrets,
  SafeGuardAdvisor,
  SimpleLoggerAdvisor,
  ToolCallingAdvisor,
  type ChatLogRecord,
} from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';

/** A tool message answering call `c1`. */
function toolResult(output: ToolResultOutput): ModelMessage {
  return { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'ask_user', output }] };
}

describe('SimpleLoggerAdvisor', () => {
  test('logs request and response as structured records with secrets redacted', async () => {
    const records: ChatLogRecord[] = [];
    const client = ChatClient.builder(mockModel([{ text: 'your key was sk-proj-abcdefghijklmnopqrstuvwx' }]))
      .defaultAdvisors(new SimpleLoggerAdvisor({ log: (r) => records.push(r) }))
      .defaultOptions({ headers: { Authorization: 'Bearer abc.def.ghijklmnop' } })
      .build();
    await client.prompt('my password=hunter2 and token Bearer eyJabcdefghijkl.mnopqrstuvwxyz.0123456789ab').call().content();
    assert.deepEqual(
      records.map((r) => r.event),
      ['request', 'response'],
    );
    const all = JSON.stringify(records);
    assert.ok(!all.includes('hunter2'));
    assert.ok(!all.includes('abcdefghijklmnopqrstuvwx'));
    assert.ok(!all.includes('ghijklmnop'));
    assert.ok(all.includes('[REDACTED]'));
  });

  test('a secret in the conversation id is masked in every record', async () => {
    const records: ChatLogRecord[] = [];
    const client = ChatClient.builder(mockModel([{ text: 'hi' }]))
      .defaultAdvisors(new SimpleLoggerAdvisor({ log: (r) => records.push(r) }))
      .build();
    await client
      .prompt('hello')
      .advisors((a) => a.param(CONVERSATION_ID, 'user-ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ'))
      .call()
      .content();
    assert.equal(records.length, 2);
    for (const record of records) assert.equal(record.conversationId, 'user-[REDACTED]');
  });

  test("a secret deep inside a tool result is redacted in the next round's record", async () => {
    // The record's own envelope (data, messages, content, output, value) takes six levels: a few more in the result reach the copy limit.
    let config: unknown = { apiKey: 'sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c', password: 'hunter2' };
    for (let level = 0; level < 9; level++) config = { level: config };
    const fetchConfig = tool({ inputSchema: z.object({}), execute: async () => config });
    const records: ChatLogRecord[] = [];
    const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'fetchConfig', input: {} }] }, { text: 'done' }]))
      .defaultAdvisors(new ToolCallingAdvisor(), new SimpleLoggerAdvisor({ log: (r) => records.push(r) }))
      .defaultTools({ fetchConfig })
      .build();
    assert.equal(await client.prompt('config?').call().content(), 'done');
    const all = JSON.stringify(records);
    assert.ok(all.includes('fetchConfig'), 'the tool result is in the log');
    assert.ok(!all.includes('hunter2'), all);
    assert.ok(!all.includes('Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c'), all);
  });

  test('images and files are logged by their size, not their bytes, in messages and tool results', async () => {
    const photo = Buffer.alloc(30_000, 7);
    const screenshot = tool({
      inputSchema: z.object({}),
      execute: async () => 'taken',
      toModelOutput: () => ({ type: 'content', value: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: photo.toString('base64') } }] }),
    });
    const records: ChatLogRecord[] = [];
    const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'screenshot', input: {} }] }, { text: 'a grey square' }]))
      .defaultAdvisors(new ToolCallingAdvisor(), new SimpleLoggerAdvisor({ log: (r) => records.push(r) }))
      .defaultTools({ screenshot })
      .build();
    const answer = await client
      .prompt()
      .messages({
        role: 'user',
        content: [
          { type: 'text', text: 'compare these' },
          { type: 'file', mediaType: 'image/png', data: photo.toString('base64') },
          { type: 'image', image: `data:image/png;base64,${photo.toString('base64')}` },
          { type: 'file', mediaType: 'application/pdf', data: new Uint8Array(photo) },
        ],
      })
      .call()
      .content();
    assert.equal(answer, 'a grey square');
    const requests = records.filter((r) => r.event === 'request');
    assert.equal(requests.length, 2);
    const all = JSON.stringify(records);
    assert.ok(!all.includes(photo.toString('base64').slice(0, 64)), 'no base64 in the log');
    assert.ok(all.length < 4_000, `the log holds ${all.length} characters`);
    const [user] = requests[1]!.data['messages'] as { content: Record<string, unknown>[] }[];
    assert.deepEqual(
      user!.content.map((part) => part['data'] ?? part['image'] ?? part['text']),
      ['compare these', '[30000 bytes]', '[data URL image/png;base64, 30000 bytes]', '[30000 bytes]'],
    );
    assert.ok(JSON.stringify(requests[1]!.data['messages']).includes('"data":{"type":"data","data":"[30000 bytes]"}'), 'the tool result image too');
  });

  test('a data URL is logged by its size wherever it is: a URL object, a tagged url, a tool result', async () => {
    const photo = Buffer.alloc(30_000, 7);
    const dataUrl = `data:image/png;base64,${photo.toString('base64')}`;
    const screenshot = tool({
      inputSchema: z.object({}),
      execute: async () => 'taken',
      toModelOutput: () => ({ type: 'content', value: [{ type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL(dataUrl) } }] }),
    });
    const records: ChatLogRecord[] = [];
    const client = ChatClient.builder(mockModel([{ toolCalls: [{ name: 'screenshot', input: {} }] }, { text: 'a grey square' }]))
      .defaultAdvisors(new ToolCallingAdvisor(), new SimpleLoggerAdvisor({ log: (r) => records.push(r) }))
      .defaultTools({ screenshot })
      .build();
    await client
      .prompt()
      .messages({
        role: 'user',
        content: [
          { type: 'file', mediaType: 'image/png', data: new URL(dataUrl) },
          { type: 'image', image: new URL(dataUrl) },
        ],
      })
      .call()
      .content();
    const all = JSON.stringify(records);
    assert.ok(!all.includes(photo.toString('base64').slice(0, 64)), 'no base64 in the log');
    assert.equal(all.split('[data URL image/png;base64, 30000 bytes]').length - 1, 2 * 2 + 1, 'the two user parts in both requests, the tool result once');
  });

  test('an async log sink that rejects breaks neither the call nor the process', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let records = 0;
      const client = ChatClient.builder(mockModel([{ text: 'fine' }, { text: 'fine' }]))
        .defaultAdvisors(
          new SimpleLoggerAdvisor({
            log: async () => {
              records++;
              throw new Error('log shipper down');
            },
          }),
        )
        .build();
      assert.equal(await client.prompt('hi').call().content(), 'fine');
      const streamed: string[] = [];
      for await (const text of client.prompt('hi').stream().content()) streamed.push(text);
      assert.equal(streamed.join(''), 'fine');
      // Unhandled rejections are reported after the microtask queue drains.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(records, 4);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('redactSecrets keeps ordinary text and hides credentials in URLs', () => {
    assert.equal(redactSecrets('postgres://app:s3cret@db:5432/x'), 'postgres://app:[REDACTED]@db:5432/x');
    assert.equal(redactSecrets('the page is 42'), 'the page is 42');
  });
});

describe('SafeGuardAdvisor', () => {
  test('a request with a sensitive word gets the configured answer and no model call', async () => {
    const model = mockModel([{ text: 'model answer' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new SafeGuardAdvisor({ sensitiveWords: ['project x'], failureResponse: 'Not here.' }))
      .build();
    assert.equal(await client.prompt('Tell me about Project X').call().content(), 'Not here.');
    assert.equal(model.doGenerateCalls.length, 0);
    const streamed: string[] = [];
    for await (const d of client.prompt('project x?').stream().content()) streamed.push(d);
    assert.deepEqual(streamed, ['Not here.']);
  });

  test('words only match whole words, and harmless requests pass', async () => {
    const client = ChatClient.builder(mockModel([{ text: 'fine' }]))
      .defaultAdvisors(new SafeGuardAdvisor({ sensitiveWords: ['ass'] }))
      .build();
    assert.equal(await client.prompt('a class assignment').call().content(), 'fine');
  });

  test('invisible characters, look-alike forms and other spacing do not slip a word past it', async () => {
    const guard = new SafeGuardAdvisor({ sensitiveWords: ['password', 'project x', 'bomb'], failureResponse: 'Not here.' });
    const client = ChatClient.builder(mockModel([{ text: 'model answer' }, { text: 'model answer' }]))
      .defaultAdvisors(guard)
      .build();
    // An invisible character inside a word hides it when removed, and one between words when read as nothing ('a\u200Bbomb').
    for (const text of [
      'the pass\u200Bword is',
      'pass\u00ADword',
      'ｐａｓｓｗｏｒｄ',
      'Project\u00A0X',
      'project\n  x',
      'PROJECT\tX',
      'a\u200Bbomb',
      'make\u2060bomb',
      'the bomb',
      // Both at once: read as a space between the words and as nothing inside one.
      'a\u200Bbo\u200Bmb',
      'the project\u2060\u00ADx',
      'pro\u200Bject\u200Bx',
    ]) {
      assert.equal(await client.prompt(text).call().content(), 'Not here.', JSON.stringify(text));
    }
    assert.equal(await client.prompt('passwords are hashed').call().content(), 'model answer');
    assert.equal(await client.prompt('a b\u200Bo\u200Bmbastic talk').call().content(), 'model answer');
  });

  test("what the caller sends as a tool's output or an approval's reason is checked too", async () => {
    const model = mockModel([{ text: 'model answer' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new SafeGuardAdvisor({ sensitiveWords: ['password'], failureResponse: 'Not here.' }))
      .build();
    const call = { role: 'assistant' as const, content: [{ type: 'tool-call' as const, toolCallId: 'c1', toolName: 'ask_user', input: {} }] };
    const answered = (output: ToolResultOutput) => client.prompt().messages({ role: 'user', content: 'help' }, call, toolResult(output));
    const outputs: ToolResultOutput[] = [
      { type: 'text', value: 'my password is hunter2' },
      { type: 'json', value: { answer: { text: ['my password is hunter2'] } } },
      { type: 'error-text', value: 'password rejected' },
      { type: 'execution-denied', reason: 'not my password' },
      { type: 'content', value: [{ type: 'text', text: 'the password' }] },
    ];
    for (const output of outputs) {
      assert.equal(await answered(output).call().content(), 'Not here.', JSON.stringify(output));
    }
    const approval = await client
      .prompt()
      .messages(
        { role: 'user', content: 'help' },
        { role: 'assistant', content: [{ type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }] },
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false, reason: 'that is my password' }] },
      )
      .call()
      .content();
    assert.equal(approval, 'Not here.');
    assert.equal(model.doGenerateCalls.length, 0);
    assert.equal(
      await answered({ type: 'json', value: { count: 3 } })
        .call()
        .content(),
      'model answer',
    );
  });

  test("entity() is not refused for the JSON instruction it adds; a refusal is reported as one, not as the model's bad JSON", async () => {
    const model = mockModel([{ text: '{"ssn_present":false}' }]);
    const client = ChatClient.builder(model)
      .defaultAdvisors(new SafeGuardAdvisor({ sensitiveWords: ['ssn', 'code', 'schema'] }))
      .build();
    const schema = z.object({ ssn_present: z.boolean() });
    assert.deepEqual(await client.prompt('Does the form hold a social security number?').call().entity(schema), { ssn_present: false });
    assert.equal(model.doGenerateCalls.length, 1);
    const refused = await client
      .prompt('What is my SSN?')
      .call()
      .entity(schema)
      .then(
        () => assert.fail('expected a refusal'),
        (error: unknown) => error,
      );
    assert.ok(EntityParseError.isInstance(refused));
    assert.match(refused.message, /refused or the answer filtered \(finish reason content-filter\)/);
    assert.equal(refused.response?.finishReason, 'content-filter');
    assert.equal(model.doGenerateCalls.length, 1, 'the model is not called for the refused request');
  });
});
