import type { LanguageModelV4Content, SharedV4ProviderMetadata, SharedV4Warning } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import type { Usage } from '../model/usage.ts';
import type { AdvisorContext } from './advisor-context.ts';

/** A tool call the model asked for. */
export interface ToolCallRequest {
  readonly toolCallId: string;
  readonly toolName: string;
  /** Parsed arguments, or the raw text when it was not valid JSON. */
  readonly input: unknown;
  /** Arguments exactly as the model produced them. */
  readonly rawInput: string;
  /**
   * Set by a governing advisor (such as the AgentBreaker) between the model's
   * request and its execution: `block` replaces the execution with `message`
   * as the tool's (error) result; `steer` runs the tool and appends `message`
   * to its result.
   */
  readonly intervention?: ToolCallIntervention;
}

/** What a governing advisor wants done with a tool call before it runs. */
export interface ToolCallIntervention {
  readonly action: 'block' | 'steer';
  readonly message: string;
  /** Name of the advisor that intervened. */
  readonly source: string;
}

/** A tool call that waits for the caller's approval (its tool has `needsApproval`). */
export interface PendingToolApproval {
  /** Answer it with a `tool-approval-response` part carrying this id (see `toolApprovalResponse`). */
  readonly approvalId: string;
  readonly toolCall: ToolCallRequest;
}

/** Why a model round ended, in the AI SDK's unified vocabulary. */
export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'interrupted' | 'other';

/** A model's answer: one round, or a whole tool loop once the ToolCallAdvisor has folded its rounds. */
export interface ChatResponse {
  /** The answer's text (of the last round). */
  readonly text: string;
  /** Raw content parts of the last round. */
  readonly content: readonly LanguageModelV4Content[];
  /** Tool calls of the last round that still await execution (empty once a tool loop is done). */
  readonly toolCalls: readonly ToolCallRequest[];
  readonly finishReason: FinishReason;
  /** Usage of the last model round. */
  readonly usage: Usage;
  /** Usage summed over every model round of this call. */
  readonly totalUsage: Usage;
  /** Model rounds made for this call. */
  readonly rounds: number;
  /**
   * Messages this call added to the conversation, in order: assistant turns,
   * tool results. Memory advisors persist exactly these after the user turn.
   */
  readonly messages: readonly ModelMessage[];
  readonly modelId: string;
  readonly warnings: readonly SharedV4Warning[];
  /**
   * Tool calls the loop stopped at because their tool needs approval. The
   * call is over; answer them and call again with `messages` and the answers
   * to continue (earlier tools are not run again). Absent when none wait.
   */
  readonly pendingApprovals?: readonly PendingToolApproval[];
}

/** A response and the context it travelled with. */
export interface ChatClientResponse {
  readonly response: ChatResponse;
  readonly context: AdvisorContext;
}

/**
 * What a streaming chain yields. Every `nextStream` ends with exactly one
 * `finish` event carrying the complete response; advisors that post-process
 * responses do so on that event.
 */
export type ChatStreamEvent =
  | {
      readonly type: 'text-delta';
      readonly text: string;
      /** Provider metadata the model sent with this text (latest wins); an empty delta may carry only that, from a block's start or end. */
      readonly providerMetadata?: SharedV4ProviderMetadata;
      /**
       * `true` for the text of a `returnDirect` answer: its tool's output, sent
       * once the call ran, not the model's words. The conversation keeps it as
       * that call's result (`response.messages` has no assistant text for it).
       */
      readonly returnDirect?: true;
    }
  | {
      readonly type: 'reasoning-delta';
      readonly text: string;
      /** Provider metadata the model sent with this reasoning (a thinking block's signature; latest wins); an empty delta may carry only that. */
      readonly providerMetadata?: SharedV4ProviderMetadata;
    }
  | {
      readonly type: 'tool-call';
      readonly toolCall: ToolCallRequest;
      /**
       * `true` for a call of a tool the provider runs itself (a hosted web
       * search): its result comes from the model, as a `tool-result` event
       * also marked, and the tool loop never runs it.
       */
      readonly providerExecuted?: boolean;
      /** `true` for a call of a tool declared with the AI SDK's `dynamicTool()` (its types are known only at run time, an MCP tool's say). */
      readonly dynamic?: true;
    }
  | {
      readonly type: 'tool-result';
      readonly toolCallId: string;
      readonly toolName: string;
      /** The tool's own result (a hosted tool's as the provider reported it), not what the model is sent; for a failed call, the text the model is sent. */
      readonly output: unknown;
      readonly isError: boolean;
      /**
       * For a failed call, what failed it, as the AI SDK's `streamText` has
       * it in a `tool-error` part: what the tool threw (a timeout:
       * `ToolTimeoutError`), the AI SDK's `NoSuchToolError` or
       * `InvalidToolInputError` for a call the tool loop did not run, or the
       * breaker's stop (an `AgentBreakerError`) for a call of the round it
       * stopped. Absent for a call blocked or not run for another reason,
       * and for a result the caller sent.
       */
      readonly error?: unknown;
      /** `true` for the result of a tool the provider ran itself. */
      readonly providerExecuted?: boolean;
      /** `true` for a call the caller denied when asked to approve it (it did not run): `output` is the reason given, if any. */
      readonly denied?: boolean;
      /**
       * `true` for a value a streaming tool (`async *execute`) yielded while it
       * ran, as the AI SDK streams them; its result follows as an event without
       * the mark (the last value).
       */
      readonly preliminary?: true;
    }
  | { readonly type: 'tool-approval-request'; readonly approvalId: string; readonly toolCall: ToolCallRequest }
  | { readonly type: 'finish'; readonly response: ChatClientResponse };
