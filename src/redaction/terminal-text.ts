import { redact } from './redact.ts';

/**
 * Control characters other than newline and tab: C0, DEL and C1. A terminal
 * acts on them (ESC and CSI start sequences that move the cursor, clear the
 * screen or retitle the window), so text from a model, a tool or a recorded
 * run must not reach one raw.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` safe to print: each control character other than newline and tab is
 * written as its `\uXXXX` escape, which a terminal shows instead of obeying,
 * and which inside a JSON string means the same character.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `text` as the CLI prints what came from elsewhere (a model, a tool, an error): secrets redacted, control characters escaped. */
export function printable(text: string): string {
  return terminalText(redact(text));
}
