import type { BreakerAction, BreakerCategory, BreakerEvidence } from './breaker-decision.ts';

const BLOCK_PREFIX = 'This call was NOT executed. ';
const STOP_PREFIX = 'Agent stopped: ';

/** How the refusal of an OPEN breaker ends: the way out a library user has besides waiting (AgentBreaker.reset). */
const RESET_CLAUSE = ' or an explicit reset.';

/** What a call on an OPEN breaker is answered, until `until` (epoch ms). */
export function openRefusalMessage(reason: string, until: number): string {
  return `Agent breaker is OPEN for this session (${reason}); calls are refused until ${new Date(until).toISOString()}${RESET_CLAUSE}`;
}

/**
 * A breaker's message as a proxy tells it: without what it opens with on a
 * block or a stop, for a caller whose own words already say it ("The call to
 * X was not run:"), and without the reset an OPEN breaker's refusal offers,
 * which a proxy's client has no way to make.
 */
export function messageBody(message: string): string {
  if (message.startsWith(BLOCK_PREFIX)) return message.slice(BLOCK_PREFIX.length);
  if (message.startsWith(STOP_PREFIX)) return message.slice(STOP_PREFIX.length);
  if (message.endsWith(RESET_CLAUSE)) return `${message.slice(0, -RESET_CLAUSE.length)}.`;
  return message;
}

/**
 * What to tell the model (steer, block) or people (stop), per loop type: what
 * is repeating, and what to do instead. Steering is addressed to the model in
 * the second person; a stop is addressed to whoever reads the error.
 *
 * A stop message holds no content (no words of the model, a tool or the
 * user): it becomes the error's message, the breaker's open reason, span
 * statuses, exception events and `AgentLoop`'s reason, all of which are
 * recorded whatever the content setting. Tool and sub-agent names are not
 * content. A steer goes back to the model and may quote it.
 */
export function breakerMessage(category: BreakerCategory, action: Exclude<BreakerAction, 'allow'>, evidence: BreakerEvidence): string {
  const prefix = action === 'block' ? BLOCK_PREFIX : action === 'stop' ? STOP_PREFIX : '';
  if (action === 'stop') return `${prefix}${stopText(category, evidence)}`;
  return `${prefix}${steerText(category, evidence)}`;
}

function steerText(category: BreakerCategory, e: BreakerEvidence): string {
  const tool = e.tool ?? 'this tool';
  switch (category) {
    case 'tool_spiral':
      return `You have called "${tool}" ${e.repeats ?? 'several'} times with ${e.similarity === 1 ? 'the same' : 'nearly the same'} arguments and it returned the same result each time. Calling it again will not tell you anything new. Use the result you already have, change the arguments materially, try a different tool, or tell the user what is blocking you.`;
    case 'error_loop':
      return e.transient === true
        ? `"${tool}" has failed ${(e.repeats ?? 2) - 1} times in a row with a temporary error (the service looks unavailable). Stop retrying it for now: continue with other work if you can, or tell the user the service is unavailable and try later.`
        : `"${tool}" has failed ${(e.repeats ?? 2) - 1} times in a row with the same error for the same request. Sending it again will fail again. Read the error, change what it complains about (the arguments, or the state it depends on), use another approach, or explain the problem to the user.`;
    case 'cycle':
      return `You are going round in a circle: ${(e.sequence ?? []).join(' → ')} has repeated ${(e.repeats ?? 3) - 1} times and every step returned the same result as before. Stop the cycle: decide with what you have, or try something you have not tried yet.`;
    case 'token_drift':
      return `The conversation is growing fast (prompt tokens ${(e.promptTokens ?? []).join(' → ')}). Stop pulling in large outputs: summarise what you have learned so far, keep only what the task needs, and finish the task.`;
    case 'rag_fixation':
      return e.pattern === 'failed_searches'
        ? `Your last ${e.repeats ?? 3} searches looked for the same thing and each found nothing. The knowledge base does not seem to hold it. Say what is missing, search for something materially different, or ask the user.`
        : `Your last ${e.repeats ?? 3} searches were nearly the same and ${e.pattern === 'same_documents' ? 'returned the same documents' : 'brought nothing new'}. The knowledge base does not seem to hold more on this. Answer from what you found, say what is missing, search for something materially different, or ask the user.`;
    case 'delegation_loop':
      return e.pattern === 'same_answer'
        ? `Sub-agent "${e.agent ?? tool}" gave the same answer to the same task again. Asking it once more will not help: use its answer, give it a materially different task, or do the step yourself.`
        : `You have given sub-agent "${e.agent ?? tool}" a similar task ${e.repeats ?? 'several'} times. Asking again will not change its answer: use what it returned, change the task materially, or do the step yourself.`;
    case 'text_repetition':
      return `You are repeating yourself (${e.detail}). Do not restate the same text: say what is new, take a different next step, or give your final answer.`;
    case 'budget':
      return `The session budget is spent (${e.tokens ?? '?'} of ${e.maxTokens ?? '?'} tokens${e.maxCostUsd !== undefined ? `, $${e.costUsd ?? 0} of $${e.maxCostUsd}` : ''}). Wrap up now: give your final answer in this reply. No more tool calls will be executed.`;
  }
}

function stopText(category: BreakerCategory, e: BreakerEvidence): string {
  switch (category) {
    case 'tool_spiral':
      return `tool-call spiral — ${e.detail}.`;
    case 'error_loop':
      return `error loop — ${e.detail}.`;
    case 'cycle':
      return `cycle — ${e.detail}.`;
    case 'token_drift':
      return `token drift — ${e.detail}.`;
    case 'rag_fixation':
      return `RAG query fixation — ${e.detail}.`;
    case 'delegation_loop':
      return `delegation loop — ${e.detail}.`;
    case 'text_repetition':
      // The evidence's detail may quote the reply: the stop says what repeated in numbers only.
      return `text repetition — ${repetitionSummary(e)}.`;
    case 'budget':
      return `session budget exhausted — ${e.detail} (${e.tokens ?? '?'} of ${e.maxTokens ?? '?'} tokens${e.maxCostUsd !== undefined ? `, $${e.costUsd ?? 0} of $${e.maxCostUsd}` : ''}).`;
  }
}

/** What repeated in the model's text, without quoting it. */
function repetitionSummary(e: BreakerEvidence): string {
  if (e.pattern === 'across_replies') {
    const alike = e.similarity === undefined ? '' : e.similarity === 1 ? ' (identical)' : ` (at least ${Math.round(e.similarity * 100)}% alike)`;
    return `the model gave the same reply ${e.repeats ?? 'several'} times${alike} with nothing new in between`;
  }
  // Within one reply: a sentence said again and again (counted), or degenerate output (the share of repeated word sequences).
  if (e.repeats !== undefined) return `one sentence of the model's reply was repeated ${e.repeats} times`;
  if (e.similarity !== undefined) return `the model's reply keeps repeating itself (${Math.round(e.similarity * 100)}% of its word sequences are repeats)`;
  return "the model's reply keeps repeating itself";
}
