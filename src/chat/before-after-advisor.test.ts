import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { MessageChatMemoryAdvisor } from '../memory/message-chat-memory-advisor.ts';
import { MessageWindowChatMemory } from '../memory/message-window-chat-memory.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { MODES, runMode } from '../test-support/run-modes.ts';
import { CONVERSATION_ID } from './advisor-context.ts';
import { AdvisorHookResultError, beforeAfterAdvisor, type BeforeAfterHooks } from './before-after-advisor.ts';
import type { ChatClientResponse } from './chat-response.ts';
import { ChatClient } from './chat-client.ts';

/** Calls the factory as plain JavaScript would: with whatever object it is given. */
const fromPlainJs = (hooks: unknown) => beforeAfterAdvisor(hooks as BeforeAfterHooks);

const refusedAs =
  (option: string, message: RegExp) =>
  (error: unknown): boolean => {
    assert.ok(InvalidOptionError.isInstance(error), `expected an InvalidOptionError, got ${String(error)}`);
    assert.equal(error.option, option);
    assert.match(error.message, message);
    return true;
  };

describe('beforeAfterAdvisor options', () => {
  test('a misspelt hook is refused at once, naming it and listing the hooks there are', () => {
    assert.throws(
      () => fromPlainJs({ name: 'a', befor: (r: unknown) => r }),
      refusedAs('befor', /not an option of beforeAfterAdvisor; its options are: name, order, before, after/),
    );
  });

  test('a missing or blank name is refused at once, not at build()', () => {
    assert.throws(() => fromPlainJs({ order: 1 }), refusedAs('name', /is required by beforeAfterAdvisor/));
    assert.throws(() => fromPlainJs({ name: ' ' }), refusedAs('name', /non-empty string/));
  });

  test('an order or a hook of the wrong type is refused at once, naming it', () => {
    assert.throws(() => fromPlainJs({ name: 'a', order: '5' }), refusedAs('order', /must be a finite number.*, got "5"/));
    assert.throws(() => fromPlainJs({ name: 'a', order: Number.NaN }), refusedAs('order', /finite number/));
    assert.throws(() => fromPlainJs({ name: 'a', after: 'log' }), refusedAs('after', /must be a function/));
  });

  test('hooks that are not an object are refused', () => {
    assert.throws(() => fromPlainJs(undefined), refusedAs('options', /must be an object/));
    assert.throws(() => fromPlainJs('audit'), refusedAs('options', /must be an object/));
  });

  test('valid hooks make an advisor with the given name and order', () => {
    const advisor = beforeAfterAdvisor({ name: 'audit', order: -5, before: (r) => r });
    assert.equal(advisor.name, 'audit');
    assert.equal(advisor.order, -5);
    assert.equal(beforeAfterAdvisor({ name: 'audit' }).order, 0);
  });
});

/** Checks the error a hook that returned the wrong thing gives. */
const hookResultError =
  (hook: 'before' | 'after', returned: RegExp) =>
  (error: unknown): boolean => {
    assert.ok(AdvisorHookResultError.isInstance(error), `expected an AdvisorHookResultError, got ${String(error)}`);
    assert.equal(error.code, 'GOVERNOR_ADVISOR_HOOK_RESULT');
    assert.equal(error.advisor, 'logger');
    assert.equal(error.hook, hook);
    assert.match(error.message, new RegExp(`beforeAfterAdvisor "logger": its ${hook} hook returned `));
    assert.match(error.message, returned);
    assert.match(error.message, hook === 'before' ? /must return the request/ : /must return the response/);
    return true;
  };

describe('beforeAfterAdvisor hooks that return nothing', () => {
  test('stream().content() fails too, instead of ending as if all went well', async () => {
    const logger = fromPlainJs({ name: 'logger', after: () => {} });
    const client = ChatClient.builder(mockModel([{ text: 'hello there' }]))
      .defaultAdvisors(logger)
      .build();
    await assert.rejects(
      async () => {
        for await (const _ of client.prompt('x').stream().content());
      },
      hookResultError('after', /returned undefined/),
    );
  });

  for (const mode of MODES) {
    test(`${mode}: an after hook that returns nothing is a typed error naming the advisor and the hook`, async () => {
      const seen: string[] = [];
      const logger = fromPlainJs({
        name: 'logger',
        after: (response: ChatClientResponse) => {
          seen.push(response.response.text);
        },
      });
      const client = ChatClient.builder(mockModel([{ text: 'hello there' }]))
        .defaultAdvisors(logger)
        .build();
      await assert.rejects(runMode(client.prompt('x'), mode), hookResultError('after', /returned undefined/));
      assert.deepEqual(seen, ['hello there'], 'the hook ran once, after the model answered');
    });

    test(`${mode}: so is an async after hook that returns the ChatResponse instead of the ChatClientResponse`, async () => {
      const logger = fromPlainJs({ name: 'logger', after: async (response: ChatClientResponse) => response.response });
      const client = ChatClient.builder(mockModel([{ text: 'hello there' }]))
        .defaultAdvisors(logger)
        .build();
      await assert.rejects(runMode(client.prompt('x'), mode), hookResultError('after', /returned an object/));
    });

    test(`${mode}: under a memory advisor, the same typed error and nothing stored`, async () => {
      const memory = new MessageWindowChatMemory();
      const logger = fromPlainJs({ name: 'logger', after: () => {} });
      const client = ChatClient.builder(mockModel([{ text: 'hello there' }]))
        .defaultAdvisors(new MessageChatMemoryAdvisor({ memory }), logger)
        .build();
      await assert.rejects(
        runMode(
          client.prompt('x').advisors((a) => a.param(CONVERSATION_ID, 'c1')),
          mode,
        ),
        hookResultError('after', /returned undefined/),
      );
      assert.deepEqual(await memory.get('c1'), []);
    });

    test(`${mode}: a before hook that returns nothing is a typed error before the model is called`, async () => {
      const model = mockModel([{ text: 'never' }]);
      const logger = fromPlainJs({
        name: 'logger',
        before: (request: { context: Map<string, unknown> }) => {
          request.context.set('seen', true);
        },
      });
      const client = ChatClient.builder(model).defaultAdvisors(logger).build();
      await assert.rejects(runMode(client.prompt('x'), mode), hookResultError('before', /returned undefined/));
      assert.equal(model.doGenerateCalls.length + model.doStreamCalls.length, 0);
    });
  }
});
