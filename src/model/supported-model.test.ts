// Every place that takes a model takes a SupportedLanguageModel: the `@ts-expect-error` lines are checked by the
// typecheck (a provider or a model id does not compile), and the runtime check stays for JavaScript callers.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openai } from '@ai-sdk/openai';
import type { LanguageModelV2 } from '@ai-sdk/provider';
import { generateText } from 'ai';
import { MockLanguageModelV3, MockLanguageModelV4 } from 'ai/test';
import { AgentBreaker, breakerForAiSdk, ChatClient, llmJudge, MiniAgent, UnsupportedModelError, type SupportedLanguageModel } from '../index.ts';
import { ScriptedModelServer, scriptedModel } from '../testing/index.ts';

// A V2 model runs in the AI SDK's compatibility mode, which it announces on every call: expected here.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** A model of spec V2, as provider packages of AI SDK 5 make them. */
function v2Model(text: string): LanguageModelV2 {
  return {
    specificationVersion: 'v2',
    provider: 'hand-made',
    modelId: 'v2',
    supportedUrls: {},
    doGenerate: async () => ({
      content: [{ type: 'text', text }],
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      warnings: [],
    }),
    doStream: async () => {
      throw new Error('not streamed here');
    },
  };
}

function v3Model(text: string): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async () => ({
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    }),
  });
}

function v4Model(text: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
      warnings: [],
    }),
  });
}

test('models of spec V2, V3 and V4 and the scripted model are SupportedLanguageModels, and ChatClient and the AI SDK door drive each', async () => {
  await using server = await new ScriptedModelServer({ script: (_request, index) => ({ text: `scripted ${index}` }) }).start();
  const models: Array<[string, SupportedLanguageModel]> = [
    ['v2', v2Model('from v2')],
    ['v3', v3Model('from v3')],
    ['v4', v4Model('from v4')],
    ['scripted', scriptedModel(server)],
  ];
  const governed = breakerForAiSdk(new AgentBreaker({ telemetry: false }), { sessionId: 'models' });
  const answers: string[] = [];
  for (const [, model] of models) {
    answers.push(await ChatClient.create(model).prompt('x').call().content());
    answers.push((await generateText({ model: governed.model(model), prompt: 'x' })).text);
  }
  assert.deepEqual(answers, ['from v2', 'from v2', 'from v3', 'from v3', 'from v4', 'from v4', 'scripted 0', 'scripted 1']);
});

test('a provider or a model id where a model goes does not compile, and still throws UnsupportedModelError', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'supported-model-'));
  try {
    const governed = breakerForAiSdk(new AgentBreaker({ telemetry: false }), { sessionId: 's' });
    const mistakes: Array<() => unknown> = [
      // @ts-expect-error the provider, not one of its models
      () => ChatClient.builder(openai),
      // @ts-expect-error a model id: the AI SDK would resolve it through a hosted gateway
      () => ChatClient.create('gpt-4o'),
      // @ts-expect-error the provider
      () => new MiniAgent({ model: openai, workingDirectory: dir, sandbox: 'none' }),
      // @ts-expect-error the provider
      () => governed.model(openai),
      // @ts-expect-error a model id
      () => llmJudge({ model: 'gpt-4o', criteria: 'x' }),
    ];
    for (const mistake of mistakes) assert.throws(mistake, (error: unknown) => UnsupportedModelError.isInstance(error));
    // The forms that compile are the ones that run.
    assert.ok(new MiniAgent({ model: openai('gpt-4o'), workingDirectory: dir, sandbox: 'none' }));
    assert.ok(llmJudge({ model: v4Model('{}'), criteria: 'x' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
