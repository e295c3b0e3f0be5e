/**
 * Test and demo helpers: a scripted stand-in for a real model, served over real
 * HTTP in the OpenAI chat completions format.
 *
 * @module
 */
// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
export { ScriptedModelServer } from './scripted-model-server.ts';
export type {
  OnExhausted,
  ScriptedModelServerOptions,
  ScriptFunction,
} from './scripted-model-server-options.ts';
export { DEFAULT_MODEL_ID } from './scripted-model-server-options.ts';
export { ScriptedModelServerError } from './scripted-model-server-error.ts';
export type {
  ScriptedCodeRun,
  ScriptedError,
  ScriptedMcpCall,
  ScriptedReasoning,
  ScriptedShellResult,
  ScriptedShellRun,
  ScriptedToolCall,
  ScriptedTurn,
  ScriptedUsage,
  ScriptedWebSearch,
} from './scripted-turn.ts';
export type { ChatCompletionMessage, ChatCompletionRequestBody, RecordedRequest } from './recorded-request.ts';
export { REDACTED } from './recorded-request.ts';
export { scriptedModel, type ScriptedModelOptions } from './scripted-model.ts';
