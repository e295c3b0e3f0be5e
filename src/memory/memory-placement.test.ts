/** Where a chat memory advisor may sit relative to the tool loop, over real HTTP. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tool } from 'ai';
import { z } from 'zod';
import {
  AdvisorOrder,
  AdvisorPlacementError,
  ChatClient,
  CONVERSATION_ID,
  MessageChatMemoryAdvisor,
  MessageWindowChatMemory,
  PromptChatMemoryAdvisor,
  ToolCallAdvisor,
} from '../index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';

const weather = tool({ description: 'weather', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `15°C in ${city}` });

describe('memory advisor placement', () => {
  for (const make of [
    (order: number) => new MessageChatMemoryAdvisor({ memory: new MessageWindowChatMemory(), order }),
    (order: number) => new PromptChatMemoryAdvisor({ memory: new MessageWindowChatMemory(), order }),
  ]) {
    const name = make(0).name;
    test(`${name} inside the tool loop is refused at build(), saying where to put it`, async () => {
      await using server = await new ScriptedModelServer({ script: [{ text: 'never' }] }).start();
      const builder = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor(), make(AdvisorOrder.TOOL_LOOP + 300));
      assert.throws(
        () => builder.build(),
        (e: unknown) =>
          AdvisorPlacementError.isInstance(e) &&
          e.code === 'GOVERNOR_ADVISOR_PLACEMENT' &&
          e.message.includes(`${name} (order ${AdvisorOrder.TOOL_LOOP + 300}) runs inside ToolCallingAdvisor`) &&
          e.message.includes('AdvisorOrder.MEMORY'),
      );
    });
  }

  test('added per request inside the loop, the call is refused before anything is sent or stored', async () => {
    await using server = await new ScriptedModelServer({ script: [{ text: 'never' }] }).start();
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(scriptedModel(server)).defaultAdvisors(new ToolCallAdvisor()).build();
    const misplaced = new MessageChatMemoryAdvisor({ memory, order: AdvisorOrder.DEFAULT });
    await assert.rejects(client.prompt('hi').advisors(misplaced).call().content(), (e: unknown) => AdvisorPlacementError.isInstance(e));
    assert.equal(server.requests.length, 0);
    assert.deepEqual(await memory.get('default'), []);
  });

  test('a call that fails mid tool loop stores what its tools did, and the conversation goes on from there', async () => {
    await using server = await new ScriptedModelServer({
      script: [{ toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] }, { error: { status: 400, message: 'bad request' } }, { text: 'Hello again' }],
    }).start();
    const memory = new MessageWindowChatMemory();
    const client = ChatClient.builder(scriptedModel(server))
      .defaultAdvisors(new ToolCallAdvisor(), new MessageChatMemoryAdvisor({ memory }))
      .defaultTools({ weather })
      .defaultAdvisorParams({ [CONVERSATION_ID]: 'c1' })
      .build();
    await assert.rejects(client.prompt('Weather in Paris?').call().content());
    assert.deepEqual(
      (await memory.get('c1')).map((m) => m.role),
      ['user', 'assistant', 'tool'],
      'the tool ran: the user turn, the call and its result are kept, and nothing after them',
    );
    assert.equal(await client.prompt('Hi').call().content(), 'Hello again');
    assert.deepEqual(
      (await memory.get('c1')).map((m) => m.role),
      ['user', 'assistant', 'tool', 'user', 'assistant'],
    );
    const sent = server.requests[2]!.body.messages;
    assert.deepEqual(
      sent.map((m) => m.role),
      ['user', 'assistant', 'tool', 'user'],
      'the next call sees the call and its result once, well-formed',
    );
  });
});
