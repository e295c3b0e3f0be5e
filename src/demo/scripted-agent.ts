import type { ChatCompletionMessage, RecordedRequest, ScriptedTurn } from '../testing/index.ts';
import { DEMO_FIX } from './demo-task.ts';

function text(message: ChatCompletionMessage): string {
  return typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
}

function shell(command: string, note: string): ScriptedTurn {
  return { text: note, toolCalls: [{ name: 'shell', arguments: { command } }] };
}

/**
 * The stand-in model's behaviour on the demo task, decided from the
 * conversation it is sent, like a real model. It looks around, runs the
 * failing check, then does what real agents do: re-runs the same check
 * again and again hoping for a different result — until something tells it
 * it is repeating itself. Then it fixes the bug, checks and submits.
 */
export function scriptedDemoAgent(request: RecordedRequest): ScriptedTurn {
  const messages = request.body.messages;
  const results = messages.filter((m) => m.role === 'tool').map(text);
  const asked = messages.filter((m) => m.role === 'assistant').map((m) => JSON.stringify(m.tool_calls ?? ''));
  if (results.some((r) => /^all checks passed$/m.test(r))) {
    return {
      text: 'The check passes now.',
      toolCalls: [{ name: 'submit', arguments: { summary: 'Fixed slugify: trim, then join every run of whitespace with "-". `node check.mjs` passes.' } }],
    };
  }
  if (asked.some((a) => a.includes('cat > slugify.mjs'))) return shell('node check.mjs', 'Let me run the check again after the fix.');
  const warned = results.some((r) => r.includes('[AgentBreaker]'));
  if (warned) return shell(DEMO_FIX, 'I was repeating myself. The bug: replace() only replaces the first space, and nothing trims. Rewriting slugify.');
  if (results.length === 0) return shell('ls', 'Let me look at the files.');
  if (results.length === 1) return shell('cat slugify.mjs check.mjs', 'Reading the code and the check.');
  return shell('node check.mjs', 'Running the check to see what fails.');
}
