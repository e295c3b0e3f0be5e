import { redact } from './redact.ts';

/**
 * The bidirectional-text controls: the marks (U+061C, U+200E, U+200F), the
 * embeddings and overrides (U+202A–U+202E) and the isolates (U+2066–U+2069).
 * Invisible, they reorder the text that follows them, so a recorded run could
 * make a tool name, an id or the line it is printed in read otherwise than it is.
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Control characters other than newline and tab: C0, DEL and C1. A terminal
 * acts on them (ESC and CSI start sequences that move the cursor, clear the
 * screen or retitle the window), so text from a model, a tool or a recorded
 * run must not reach one raw. The bidirectional-text controls go with them.
 */
const CONTROL = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f]|${BIDI_CONTROL.source}`, 'g');

function escapeCharacter(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` safe to print: each control character other than newline and tab,
 * and each bidirectional-text control, is written as its `\uXXXX` escape,
 * which a terminal shows instead of obeying, and which inside a JSON string
 * means the same character.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROL, escapeCharacter);
}

/** `text` as the CLI prints what came from elsewhere (a model, a tool, an error): secrets redacted, control characters escaped. */
export function printable(text: string): string {
  return terminalText(redact(text));
}
