import type { ModelMessage } from 'ai';
import type { PendingToolApproval } from '../chat/chat-response.ts';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ToolApprovalConflictError } from '../memory/chat-memory-errors.ts';

/** An approval answer as `AgentLoop.resume` takes it. */
interface Answer {
  readonly approvalId: string;
  readonly approved: boolean;
}

/** What is known of one answered approval: its resume runs, or ran and left its results in `transcript`. */
type Resumed = { readonly approved: boolean; readonly transcript?: readonly ModelMessage[] } | 'running';

/** Most answered approvals remembered: a loop resumed for ever keeps the newest. */
const REMEMBERED = 1_000;

/**
 * The approvals an `AgentLoop` was asked to resume, so that a resume of the
 * same answers, at once (a double click) or again after the resumed run
 * failed, never runs an approved tool twice. Without a chat memory, which
 * claims answers itself, nothing else remembers that the tool ran.
 */
export class ResumedApprovals {
  readonly #answered = new Map<string, Resumed>();

  /**
   * Claims `answers` for a resume. Resolves to the transcript to go on from
   * when every answer was given before and its calls ran (it ends with their
   * results), or undefined for a first resume.
   * @throws ToolApprovalConflictError while a resume of one of them runs
   * @throws InvalidOptionError when an answer contradicts the one given before
   */
  claim(answers: readonly Answer[]): readonly ModelMessage[] | undefined {
    const running = answers.filter((a) => this.#answered.get(a.approvalId) === 'running').map((a) => a.approvalId);
    if (running.length > 0) throw new ToolApprovalConflictError(running);
    const before = answers.map((a) => this.#answered.get(a.approvalId));
    for (const [i, known] of before.entries()) {
      if (known !== undefined && known !== 'running' && known.approved !== answers[i]!.approved) {
        throw new InvalidOptionError(
          `answers[${i}].approved`,
          `approval "${answers[i]!.approvalId}" was answered ${known.approved ? 'approved' : 'denied'} before, and that answer went on; it cannot be changed`,
        );
      }
    }
    const done = before.every((known) => known !== undefined && known !== 'running' && known.transcript !== undefined);
    const transcript = done ? (before[0] as { transcript: readonly ModelMessage[] }).transcript : undefined;
    for (const a of answers) this.#answered.set(a.approvalId, 'running');
    return transcript;
  }

  /**
   * Records how the resume of `answers` went: `transcript` is the run's, or
   * undefined when it failed before any of it could be known. Answers whose
   * calls left results in it are remembered with the transcript up to the last
   * of them; the others are released, so a retry asks for them afresh.
   */
  settle(answers: readonly Answer[], pending: readonly PendingToolApproval[], transcript: readonly ModelMessage[] | undefined): void {
    const ids = new Set(answers.map((a) => a.approvalId));
    const calls = new Set(pending.filter((p) => ids.has(p.approvalId)).map((p) => p.toolCall.toolCallId));
    const end = transcript === undefined ? -1 : endOfResults(transcript, ids, calls);
    for (const a of answers) {
      this.#answered.delete(a.approvalId);
      if (end >= 0) this.#answered.set(a.approvalId, { approved: a.approved, transcript: transcript!.slice(0, end + 1) });
    }
    while (this.#answered.size > REMEMBERED) this.#answered.delete(this.#answered.keys().next().value!);
  }
}

/**
 * Where the last result of `calls` is in `transcript`, after the answers to
 * `approvals` (some providers number calls per turn, so an earlier call may
 * have had the same id): -1 unless every one of them has its result there.
 */
function endOfResults(transcript: readonly ModelMessage[], approvals: ReadonlySet<string>, calls: ReadonlySet<string>): number {
  const answeredAt = transcript.findLastIndex(
    (message) => message.role === 'tool' && message.content.some((part) => part.type === 'tool-approval-response' && approvals.has(part.approvalId)),
  );
  if (answeredAt === -1) return -1;
  const seen = new Set<string>();
  let end = -1;
  for (let index = answeredAt; index < transcript.length; index++) {
    const message = transcript[index]!;
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && calls.has(part.toolCallId)) {
        seen.add(part.toolCallId);
        end = index;
      }
    }
  }
  return seen.size === calls.size ? end : -1;
}
