import type { ModelMessage } from 'ai';

/**
 * A conversation as plain text, one line per message part, for placing the
 * history inside a system prompt:
 *
 *   user: What is the weather in Paris?
 *   assistant called weather({"city":"Paris"})
 *   weather returned: 15°C
 *   assistant: It is 15°C in Paris.
 *
 * System messages are left out (they are instructions, not conversation);
 * images and files appear as `[image]` / `[file name]` placeholders. A line
 * break inside an entry is followed by two spaces, so only the entries' own
 * first lines start at the margin.
 */
export function historyText(messages: readonly ModelMessage[]): string {
  // Each entry's own line breaks are indented: a message cannot start a line
  // of its own that reads as another speaker's, or as the end of the memory.
  const lines: string[] = [];
  const push = (entry: string): void => {
    lines.push(entry.replace(/\r\n?|\n|\u2028|\u2029/g, '\n  '));
  };
  for (const message of messages) {
    if (message.role === 'system') continue;
    if (typeof message.content === 'string') {
      push(`${message.role}: ${message.content}`);
      continue;
    }
    const text: string[] = [];
    const flush = (): void => {
      if (text.length > 0) push(`${message.role}: ${text.join(' ')}`);
      text.length = 0;
    };
    for (const part of message.content as readonly Record<string, unknown>[]) {
      switch (part.type) {
        case 'text':
          text.push(String(part.text));
          break;
        case 'image':
          text.push('[image]');
          break;
        case 'file':
          text.push(typeof part.filename === 'string' ? `[file ${part.filename}]` : '[file]');
          break;
        case 'tool-call':
          flush();
          push(`${message.role} called ${String(part.toolName)}(${json(part.input)})`);
          break;
        case 'tool-result':
          flush();
          push(`${String(part.toolName)} returned: ${outputText(part.output)}`);
          break;
        default:
          // Reasoning, approvals and provider-specific parts are not part of what was said.
          break;
      }
    }
    flush();
  }
  return lines.join('\n');
}

function outputText(output: unknown): string {
  if (output === null || typeof output !== 'object') return '';
  const { type, value, reason } = output as { type?: unknown; value?: unknown; reason?: unknown };
  switch (type) {
    case 'text':
      return String(value);
    case 'error-text':
      return `error: ${String(value)}`;
    case 'json':
      return json(value);
    case 'error-json':
      return `error: ${json(value)}`;
    case 'execution-denied':
      return `not run (denied${typeof reason === 'string' ? `: ${reason}` : ''})`;
    case 'content':
      return Array.isArray(value)
        ? value.map((item: { type?: unknown; text?: unknown }) => (item.type === 'text' ? String(item.text) : '[file]')).join(' ')
        : '';
    default:
      return '';
  }
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
