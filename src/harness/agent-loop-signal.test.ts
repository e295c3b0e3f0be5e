import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ChatClient } from '../index.ts';
import { mockModel } from '../test-support/mock-model.ts';
import { AgentLoop } from './agent-loop.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('AgentLoop and a long-lived abort signal', () => {
  test('a finished run leaves nothing on the signal: a server-wide signal passed to every run keeps no run alive', async () => {
    const shutdown = new AbortController();
    const runs = 20;
    const client = ChatClient.builder(mockModel(Array.from({ length: runs }, () => ({ text: 'done' })))).build();
    const loops: WeakRef<AgentLoop>[] = [];
    for (let i = 0; i < runs; i++) {
      const loop = new AgentLoop({ client, finishTool: null, abortSignal: shutdown.signal });
      assert.equal((await loop.run(`task ${i}`)).status, 'completed');
      loops.push(new WeakRef(loop));
    }
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const alive = loops.filter((ref) => ref.deref() !== undefined).length;
    assert.ok(alive <= 1, `${alive} of ${runs} finished runs are still in memory`);
  });
});
