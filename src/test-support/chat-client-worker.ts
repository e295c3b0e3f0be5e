/**
 * One replica for the two-process test: a ChatClient with the ToolCallingAdvisor
 * and an AgentBreaker on a RedisBreakerStore. The model asks for the same
 * status check `CALLS` times, then answers. Its turn continues the session's
 * run (a harness continuation, not a new user turn). Prints one JSON line with
 * what happened and exits.
 */
import { tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, AgentBreakerError, ChatClient, CONTINUATION_TURN, CONVERSATION_ID, ToolCallingAdvisor, type BreakerEventRecord } from '../index.ts';
import { RedisBreakerStore } from '../redis/redis-breaker-store.ts';
import { mockModel } from './mock-model.ts';

const { WORKER_REDIS_URL: url, WORKER_KEY_PREFIX: keyPrefix, WORKER_SESSION: session, WORKER_CALLS: calls } = process.env;
if (!url || !keyPrefix || !session || !calls) throw new Error('WORKER_REDIS_URL, WORKER_KEY_PREFIX, WORKER_SESSION and WORKER_CALLS are required');

const store = new RedisBreakerStore({ url, keyPrefix });
const breaker = new AgentBreaker({ store, telemetry: false });
const escalations: string[] = [];
breaker.on((e: BreakerEventRecord) => {
  if (e.type === 'escalation') escalations.push(`${e.category}:${e.action}`);
});
let executions = 0;
const status = tool({
  inputSchema: z.object({ job: z.string() }),
  execute: async () => {
    executions += 1;
    return 'job 7: FAILED (exit 1)';
  },
});
const model = mockModel([
  ...Array.from({ length: Number(calls) }, () => ({ toolCalls: [{ name: 'status', input: { job: '7' } }] })),
  { text: 'Still failing.' },
]);
const client = ChatClient.builder(model).defaultAdvisors(new ToolCallingAdvisor(), breaker).defaultTools({ status }).build();

let error: { name: string; category: string } | undefined;
try {
  await client
    .prompt()
    .messages({ role: 'user', content: 'Is job 7 done?' })
    .advisors((a) => a.param(CONVERSATION_ID, session).param(CONTINUATION_TURN, true))
    .call()
    .content();
} catch (e) {
  if (!(e instanceof AgentBreakerError)) throw e;
  error = { name: e.name, category: e.category };
}
process.stdout.write(`${JSON.stringify({ escalations, executions, modelCalls: model.doGenerateCalls.length, error })}\n`);
await store.close();
process.exit(0);
