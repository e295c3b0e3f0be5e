// The public types of the breaker, as a user's code reads them: these assignments and `@ts-expect-error` lines are
// checked by the typecheck, and each test also runs the real breaker to show the narrowed fields are there.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AgentBreaker,
  InMemoryBreakerStore,
  type AnswerPrint,
  type BreakerCategory,
  type BreakerDecision,
  type BreakerEscalationRecord,
  type BreakerEventRecord,
  type BreakerStatus,
  type BreakerStore,
  type ResultDigest,
  type SessionOutcome,
  type TaskPrint,
  type ToolProposal,
  type UserTurnsState,
} from '../index.ts';
import { BreakerDriver } from './test-support/breaker-driver.ts';

/** Allow, allow, steer, block, stop: the default tool-spiral ladder. */
async function spiral(breaker: AgentBreaker, sessionId = 's'): Promise<BreakerDecision[]> {
  const calls = await new BreakerDriver(breaker, sessionId).repeat(5, 'get_status', { job: 'build' }, () => 'queued');
  return calls.map((call) => call.decision);
}

describe('breaker types narrow as the breaker behaves', () => {
  test("switching on an event's type gives an escalation's category and action and a state change's from and to", async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const escalations: Array<[BreakerCategory, 'steer' | 'block' | 'stop', string]> = [];
    const changes: Array<[BreakerStatus, BreakerStatus]> = [];
    const notices: string[] = [];
    breaker.on((event) => {
      switch (event.type) {
        case 'escalation':
          escalations.push([event.category, event.action, event.message]);
          break;
        case 'state_change':
          changes.push([event.from, event.to]);
          break;
        default:
          notices.push(event.message);
      }
    });
    await spiral(breaker);
    assert.deepEqual(
      escalations.map(([category, action]) => [category, action]),
      [
        ['tool_spiral', 'steer'],
        ['tool_spiral', 'block'],
        ['tool_spiral', 'stop'],
      ],
    );
    assert.ok(escalations.every(([, , message]) => message.length > 0));
    assert.deepEqual(changes, [['CLOSED', 'OPEN']]);
    assert.deepEqual(notices, []);
  });

  test('code that reads the fields without narrowing still compiles and reads them', async () => {
    const breaker = new AgentBreaker({ telemetry: false });
    const seen: Array<Pick<BreakerEventRecord, 'type' | 'category' | 'from' | 'to'>> = [];
    breaker.on((event) => seen.push({ type: event.type, category: event.category, from: event.from, to: event.to }));
    await spiral(breaker);
    const change = seen.find((event) => event.type === 'state_change');
    assert.deepEqual(change, { type: 'state_change', category: 'tool_spiral', from: 'CLOSED', to: 'OPEN' });
    assert.equal(seen.find((event) => event.type === 'escalation')?.from, undefined);
  });

  test("a steer's or a block's message and category need no check", async () => {
    const told: string[] = [];
    for (const decision of await spiral(new AgentBreaker({ telemetry: false }))) {
      if (decision.action === 'steer' || decision.action === 'block') {
        const category: BreakerCategory = decision.category;
        const message: string = decision.message;
        told.push(`${decision.action} ${category}: ${message.length > 0}`);
      }
    }
    assert.deepEqual(told, ['steer tool_spiral: true', 'block tool_spiral: true']);
  });

  test("a decision or an escalation of one's own must carry what the breaker's always carry", () => {
    // @ts-expect-error a steer without the message it tells the model
    const steer: BreakerDecision = { action: 'steer', category: 'tool_spiral' };
    // @ts-expect-error an escalation is never an `allow`
    const allowed: BreakerEscalationRecord = { ...escalation(), action: 'allow' };
    // A stop may lack its category: a store outage has none.
    const outage: BreakerDecision = { action: 'stop', reason: 'store_unavailable', message: 'down' };
    assert.deepEqual([steer.action, allowed.action, outage.category], ['steer', 'allow', undefined]);
  });
});

function escalation(): BreakerEscalationRecord {
  return { type: 'escalation', sessionId: 's', at: 0, category: 'cycle', action: 'steer', message: 'm', evidence: { detail: 'd' } };
}

describe('a BreakerStore of its own names what it is handed', () => {
  /** Keeps what the breaker's operations carry, by the names the package exports for them. */
  class WatchingStore implements BreakerStore {
    readonly #inner = new InMemoryBreakerStore();
    readonly proposals: ToolProposal[] = [];
    readonly digests: ResultDigest[] = [];
    readonly prints: Array<TaskPrint | AnswerPrint> = [];
    readonly userTurns: UserTurnsState[] = [];
    readonly outcomes: SessionOutcome[] = [];

    read: BreakerStore['read'] = (sessionId) => this.#inner.read(sessionId);
    delete: BreakerStore['delete'] = (sessionId) => this.#inner.delete(sessionId);

    apply: BreakerStore['apply'] = async (sessionId, op, reducer) => {
      if (op.k === 'tool' || op.k === 'observe') {
        if (op.p !== undefined) this.proposals.push(op.p);
        if (op.t !== undefined) this.prints.push(op.t);
      }
      if (op.k === 'observe') {
        if (op.d !== undefined) this.digests.push(op.d);
        if (op.a !== undefined) this.prints.push(op.a);
      }
      const applied = await this.#inner.apply(sessionId, op, reducer);
      if (applied.state.userTurns !== undefined) this.userTurns.push(applied.state.userTurns);
      this.outcomes.push(applied.outcome);
      return applied;
    };
  }

  test('tool proposals, result digests, sub-agent prints, user turns and outcomes', async () => {
    const store = new WatchingStore();
    const breaker = new AgentBreaker({ store, telemetry: false });
    await breaker.observe('s', { kind: 'user', text: 'Find the build status of job build, please.' });
    await spiral(breaker);
    await breaker.observe('t', { kind: 'delegation', agent: 'researcher', input: 'Find flights to Oslo', output: 'Two flights.' });
    assert.ok(store.proposals.length > 0 && store.proposals.every((proposal) => proposal.tool === 'get_status'));
    assert.ok(store.digests.length > 0);
    assert.equal(store.prints.length, 2, 'the delegation: its task print and its answer print');
    assert.ok(store.userTurns.length > 0);
    assert.ok(store.outcomes.some((outcome) => outcome.decision.action === 'stop'));
  });
});
