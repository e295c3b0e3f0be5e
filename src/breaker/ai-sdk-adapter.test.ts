/**
 * `breakerForAiSdk` on a tool that throws: the AI SDK writes the error result
 * the model reads itself, and a steer decided for the call must reach the model
 * on it. The real AI SDK (`generateText`, `streamText`) with the
 * `@ai-sdk/openai-compatible` provider over real HTTP against the scripted
 * stand-in model.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { AgentBreaker, breakerForAiSdk, ErrorLoopError, type BreakerEventRecord } from '../index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';
import { escalations, lastToolResult } from '../e2e/recorded-run.ts';

function failingDeploy(sessionId: string, thrown: () => Error = () => new Error('permission denied: role deployer missing')) {
  const breaker = new AgentBreaker({ telemetry: false });
  const events: BreakerEventRecord[] = [];
  breaker.on((event) => events.push(event));
  const governed = breakerForAiSdk(breaker, { sessionId });
  let attempts = 0;
  const tools = governed.tools({
    deploy: tool({
      description: 'Deploys to an environment',
      inputSchema: z.object({ env: z.string() }),
      execute: async (): Promise<string> => {
        attempts += 1;
        throw thrown();
      },
    }),
  });
  return { events, governed, tools, attempts: () => attempts };
}

function loopingModel(): Promise<ScriptedModelServer> {
  return new ScriptedModelServer({ script: [{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] }], onExhausted: 'repeat-last' }).start();
}

/** What `generateText` rejects with: the breaker must end the run before its step cap. */
function stoppedGenerateText(
  server: ScriptedModelServer,
  governed: ReturnType<typeof failingDeploy>['governed'],
  tools: ReturnType<typeof failingDeploy>['tools'],
): Promise<unknown> {
  return generateText({
    model: governed.model(scriptedModel(server)),
    tools,
    stopWhen: [isStepCount(20), governed.stopWhen],
    prompt: 'Deploy to prod.',
  }).then(
    () => assert.fail('the breaker must end the run'),
    (e: unknown) => e,
  );
}

/** What every variant shows on the wire: the steer on the 3rd error result, kept there in later requests, then the block. */
function assertSteeredOnTheError(server: ScriptedModelServer, events: readonly BreakerEventRecord[], attempts: number, error: unknown): void {
  assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
  assert.deepEqual(escalations(events), ['error_loop:steer', 'error_loop:block', 'error_loop:stop']);
  assert.equal(attempts, 3, 'the 3rd attempt ran steered; the 4th was blocked, the 5th stopped');
  assert.equal(lastToolResult(server.requests[1]), 'Error: permission denied: role deployer missing', 'an unsteered failure reads as without the breaker');
  const steered = /^Error: permission denied: role deployer missing\n\n\[AgentBreaker\] "deploy" has failed/;
  assert.match(lastToolResult(server.requests[3]), steered, 'the 3rd error result carries the steer');
  const earlier = server.requests[4]!.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
  assert.match(earlier[2]!, steered, 'and keeps it in later requests');
  assert.match(lastToolResult(server.requests[4]), /^\[AgentBreaker\] This call was NOT executed\./);
}

describe('breakerForAiSdk: a tool that throws', () => {
  test('generateText: the steer decided for the 3rd attempt reaches the model on its error result', async () => {
    await using server = await loopingModel();
    const { events, governed, tools, attempts } = failingDeploy('ai-throws');
    const error = await stoppedGenerateText(server, governed, tools);
    assertSteeredOnTheError(server, events, attempts(), error);
  });

  test('streamText: the same', async () => {
    await using server = await loopingModel();
    const { events, governed, tools, attempts } = failingDeploy('ai-throws-stream');
    const result = streamText({
      model: governed.model(scriptedModel(server)),
      tools,
      stopWhen: [isStepCount(20), governed.stopWhen],
      prompt: 'Deploy to prod.',
    });
    // The stop decided on the last tool call is thrown by the stop condition, out of the stream.
    const error = await (async () => {
      for await (const _part of result.fullStream) {
        // drained only to drive the run
      }
    })().then(
      () => assert.fail('the breaker must end the run'),
      (e: unknown) => e,
    );
    assertSteeredOnTheError(server, events, attempts(), error);
  });
});

describe('breakerForAiSdk: a tool whose error names the outage only in its fields', () => {
  test('a status of 503 on the error gets the allowance for transient errors, as the same words in its message do', async () => {
    await using server = await loopingModel();
    const { governed, tools, attempts } = failingDeploy('ai-throws-status', () => Object.assign(new Error('upstream failed'), { status: 503 }));
    const error = await stoppedGenerateText(server, governed, tools);
    assert.ok(ErrorLoopError.isInstance(error), `expected ErrorLoopError, got ${String(error)}`);
    assert.equal(error.evidence?.['transient'], true);
    assert.equal(attempts(), 5, 'an outage is retried longer than a rejection (3 attempts)');
    assert.equal(lastToolResult(server.requests[1]), 'Error: upstream failed', 'the model reads what the AI SDK writes, as without the breaker');
  });
});
