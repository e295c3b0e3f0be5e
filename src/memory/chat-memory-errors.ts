import type { ChatResponse } from '../chat/chat-response.ts';
import { GovernorError } from '../errors/governor-error.ts';
import { describeError } from '../errors/describe-error.ts';

/**
 * Thrown when a conversation id is missing (a `CONVERSATION_ID` advisor param
 * set to `undefined` or `null` included), not a string, blank, not
 * well-formed UTF-16, holds U+0000, or is over 1024 UTF-8 bytes. Nothing is
 * read or written.
 */
export class InvalidConversationIdError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_CONVERSATION_ID';
  /** @param fix what to pass instead; the default fits a missing or blank id. */
  constructor(problem: string, fix = 'Pass a non-blank string that names the conversation.') {
    super('GOVERNOR_INVALID_CONVERSATION_ID', `Invalid conversation id: ${problem}. ${fix}`);
  }
}

/**
 * Thrown when a message cannot be stored as it is: not a chat message, or
 * holding a value that has no faithful stored form (a function, a bigint, a
 * circular reference, a class instance other than `Uint8Array`, `ArrayBuffer`,
 * `URL` or `Date`). Nothing of the batch is written.
 */
export class InvalidMessageError extends GovernorError {
  declare readonly code: 'GOVERNOR_INVALID_MESSAGE';
  /** Position of the offending message in the batch that was passed in. */
  readonly index: number;
  /** Where inside the message the problem is, e.g. `content[1].input.when`. */
  readonly path: string;

  constructor(index: number, path: string, problem: string) {
    super('GOVERNOR_INVALID_MESSAGE', `Message ${index} cannot be stored: ${path === '' ? '' : `at ${path}: `}${problem}`);
    this.index = index;
    this.path = path;
  }
}

/**
 * Thrown when one message is larger than the memory's `maxMessageBytes`.
 * Nothing of the batch is written. The memory advisors throw it for the
 * caller's messages before the model is called; what the call produces is
 * stored with its oversized parts left out instead.
 */
export class MessageTooLargeError extends GovernorError {
  declare readonly code: 'GOVERNOR_MESSAGE_TOO_LARGE';
  /** Position of the offending message in the batch that was passed in. */
  readonly index: number;
  /** Size of the message in its stored form (UTF-8 bytes). */
  readonly bytes: number;
  /** The configured limit. */
  readonly maxBytes: number;

  constructor(index: number, bytes: number, maxBytes: number) {
    super(
      'GOVERNOR_MESSAGE_TOO_LARGE',
      `Message ${index} is too large to store: ${bytes} bytes, the limit (maxMessageBytes) is ${maxBytes}. ` +
        'Store large files elsewhere and reference them by URL, or raise maxMessageBytes.',
    );
    this.index = index;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** Thrown when stored data cannot be read back as a message (written by something else, or damaged). */
export class MessageDecodingError extends GovernorError {
  declare readonly code: 'GOVERNOR_MESSAGE_DECODING';
  /** What is wrong with the stored text, without where it is. */
  readonly problem: string;
  /** @param where the store, the conversation and the message's position, when known */
  constructor(problem: string, options?: { cause?: unknown; where?: string }) {
    super('GOVERNOR_MESSAGE_DECODING', `Stored chat message cannot be decoded${options?.where ? ` (${options.where})` : ''}: ${problem}`, options);
    this.problem = problem;
  }
}

/**
 * Thrown when the store behind a repository fails or cannot be reached.
 * The message names the store and its address (never credentials); the
 * driver's error is the `cause`. A write that failed is not applied, unless
 * `mayBeApplied` says that it may have been.
 */
export class ChatMemoryStoreError extends GovernorError {
  declare readonly code: 'GOVERNOR_CHAT_MEMORY_STORE';
  /** The store, e.g. `PostgreSQL at 127.0.0.1:5432/app`. */
  readonly store: string;
  /**
   * Whether the write that failed may still have been applied: it may have
   * reached the store, whose reply did not come in time (a server that
   * stalled applies it should it resume). Read the conversation to find out
   * before writing it again. False for reads, and for a write the store knows
   * it did not apply.
   */
  readonly mayBeApplied: boolean;

  /**
   * What the message adds when the write may have been applied; a subclass
   * names what it wrote.
   */
  protected static readonly mayBeAppliedAdvice: string =
    'It may still have been applied (it may have reached the store, whose reply did not come): read the conversation before writing it again.';

  /**
   * @param operation what failed, completing "failed to …"
   * @param cause the driver's error
   * @param options `mayBeApplied`: the write may have been applied (see {@link ChatMemoryStoreError.mayBeApplied})
   */
  constructor(store: string, operation: string, cause: unknown, options: { mayBeApplied?: boolean } = {}) {
    const mayBeApplied = options.mayBeApplied === true;
    const advice = mayBeApplied ? `. ${new.target.mayBeAppliedAdvice}` : '';
    super('GOVERNOR_CHAT_MEMORY_STORE', `Chat memory store ${store} failed to ${operation}: ${describeCause(cause)}${advice}`, { cause });
    this.store = store;
    this.mayBeApplied = mayBeApplied;
  }
}

/**
 * Thrown by a chat memory advisor when the call itself succeeded (the model
 * answered, tools ran) but storing its turn failed. The call's `response` is
 * attached, so its answer, usage and tool results are not lost with it. The
 * memory holds none of the turn (an `add` is all or nothing), unless
 * `mayBeApplied` is true: the store did not answer in time, and may still
 * have stored it all, so read the conversation before storing the turn again
 * or sending its message again. It is a `ChatMemoryStoreError`, so code that
 * handles those handles it too; the error the memory threw is the `cause`.
 */
export class ChatMemoryTurnNotStoredError extends ChatMemoryStoreError {
  /** The call's response, as `chatResponse()` would have returned it. */
  readonly response: ChatResponse;

  protected static override readonly mayBeAppliedAdvice: string =
    'The turn may still have been stored (the write may have reached the store, whose reply did not come): read the conversation before storing it again.';

  /**
   * @param response the finished call's response
   * @param cause what the memory's `add` threw; the turn may have been stored when it is a `ChatMemoryStoreError` that says its write may have been applied
   * @param memory names the memory when `cause` does not name a store
   */
  constructor(response: ChatResponse, cause: unknown, memory: string) {
    const store = ChatMemoryStoreError.isInstance(cause);
    super(store ? cause.store : memory, "store the turn of a call that succeeded (the call's response is on this error's `response`)", cause, {
      mayBeApplied: store && cause.mayBeApplied === true,
    });
    this.response = response;
  }
}

/**
 * Thrown by a chat memory advisor when a tool approval the request answers
 * was already answered in the conversation by another request: two answers
 * to one approval at once (a double click, a retried request, two replicas
 * on one store), a retry after a call that claimed the approval and did
 * not store the tool's result (it failed or was aborted while the tool ran),
 * or an answer sent again after its turn is over (the call ran or was denied,
 * and the model answered, a return-direct or loop-ending tool of its round
 * ended the tool loop, or the conversation moved on), whether the request
 * holds only the answer, the round again with it, or the whole conversation.
 * The approved call is not run by this request, so it runs at most once, and
 * the model is not called. Nothing of this request is left in the conversation
 * the memory returns (a windowed memory's store keeps the claim it lost, but
 * its reads leave it out); an answer to a turn that is over leaves the memory
 * as it was. A request that answers several approvals and loses one of them
 * runs none: its other answers are not recorded either, so those approvals
 * stay open and can be answered again (without the ones in `approvalIds`).
 *
 * A retry of a call that failed after the approved tool ran (a model round
 * after it failed) is not a second answer: its turn is not over, and it goes
 * on from the stored results. Of two such retries at once, one goes on and
 * the other fails with this error (see `ChatMemory.claimRetry`).
 */
export class ToolApprovalConflictError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_APPROVAL_CONFLICT';
  /** The approvals another request answered first. */
  readonly approvalIds: readonly string[];

  constructor(approvalIds: readonly string[]) {
    super(
      'GOVERNOR_TOOL_APPROVAL_CONFLICT',
      `Tool approval ${approvalIds.map((id) => `"${id}"`).join(', ')} was already answered by another request, which runs the approved call ` +
        '(or ran it, or was cut off while it ran); it is not run again. Read the conversation again instead of answering twice.',
    );
    this.approvalIds = approvalIds;
  }
}

/** Why a request's tool results are refused (see {@link ToolResultConflictError}). */
export type ToolResultConflictReason =
  /** Another request sent them first and claimed them: it gets the model's answer, got it, or did not finish. */
  | 'claimed'
  /** The conversation went on (a user message) before they came: the calls were closed as not answered. */
  | 'moved-on';

/**
 * Thrown by a chat memory advisor when a request sends the results of
 * client-side tool calls (tools the caller runs itself) that the
 * conversation cannot take any more, so that the model does not answer one
 * round twice:
 *
 * - two requests with the same results for the open round at once (a double
 *   click, a request retried while the first still runs, two replicas on one
 *   store): the first to claim them (see `ChatMemory.claimToolResults`) gets
 *   the model's answer, the other fails with this error before its model is
 *   called, and nothing of it is left in the conversation the memory returns
 *   (`reason` `'claimed'`; also when the request that claimed them was cut
 *   off before it finished);
 * - results sent again after their turn is over (the model answered them),
 *   in a request that holds nothing else, as the results, the round again
 *   with them, or the whole conversation up to them (a retry after a lost
 *   response, a late double submit): the memory is left as it was
 *   (`reason` `'claimed'`). Results sent again alongside a new user message
 *   are left out of the request instead, as the memory holds them;
 * - results that come after the conversation went on without them (a user
 *   message was stored first, so the calls were closed as not answered):
 *   `reason` `'moved-on'`, the memory is left as it was.
 *
 * A retry after the request that sent the results failed (its model round
 * failed, or it was aborted) is not refused: that request stored the results,
 * and the retry goes on from them. Of two such retries at once, one goes on
 * and the other fails with this error (see `ChatMemory.claimRetry`).
 */
export class ToolResultConflictError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_RESULT_CONFLICT';
  /** The calls whose results are refused. */
  readonly toolCallIds: readonly string[];
  /** Why they are refused. */
  readonly reason: ToolResultConflictReason;

  constructor(toolCallIds: readonly string[], reason: ToolResultConflictReason = 'claimed') {
    const calls = `Tool call ${toolCallIds.map((id) => `"${id}"`).join(', ')}`;
    const outcome = 'nothing of this request was sent to the model or left in the conversation.';
    super(
      'GOVERNOR_TOOL_RESULT_CONFLICT',
      reason === 'moved-on'
        ? `${calls} got no result before the conversation went on (a later user message was stored first), so the model was told ` +
            `it was not answered; its result now comes too late, and ${outcome} Read the conversation again, and ask again if the result still matters.`
        : `${calls} already has its result in the conversation, sent first by another request (or by this one earlier), which gets the ` +
            `model's answer to it, got it already, or did not finish; ${outcome} Read the conversation again instead of sending the results twice.`,
    );
    this.toolCallIds = toolCallIds;
    this.reason = reason;
  }
}

/**
 * Thrown by a chat memory advisor, before the model is called, when a
 * request sends client-side tool results, and nothing else new, for calls
 * the conversation does not hold (it was cleared, or the call id is wrong)
 * and that the request does not carry itself: a provider refuses a result
 * without its call. Nothing of the request is stored. Sent alongside a user
 * message, such results are left out of the request instead.
 */
export class ToolResultWithoutCallError extends GovernorError {
  declare readonly code: 'GOVERNOR_TOOL_RESULT_WITHOUT_CALL';
  /** The calls the conversation does not hold. */
  readonly toolCallIds: readonly string[];

  constructor(toolCallIds: readonly string[]) {
    super(
      'GOVERNOR_TOOL_RESULT_WITHOUT_CALL',
      `Tool call ${toolCallIds.map((id) => `"${id}"`).join(', ')} is not in the conversation (it was cleared, or never made there), ` +
        'so its result cannot be sent to the model; nothing of this request was sent or stored. Start the turn again with a user message.',
    );
    this.toolCallIds = toolCallIds;
  }
}

function describeCause(cause: unknown): string {
  // A store error wrapped again names its store already; its own cause says what went wrong.
  if (ChatMemoryStoreError.isInstance(cause) && cause.cause !== undefined) return describeCause(cause.cause);
  return describeError(cause);
}
