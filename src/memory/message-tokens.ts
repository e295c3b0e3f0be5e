import type { ModelMessage } from 'ai';
import type { Tokenizer } from './tokenizer.ts';

/**
 * Tokens of the text a model reads in one message: text and reasoning, tool
 * names with their JSON arguments, tool results, file names and URLs.
 * Inline binary data (images, files) is not counted: providers price it by
 * their own rules, and counting its base64 text would overstate it by orders
 * of magnitude. Per-message framing tokens are not counted either.
 */
export function countMessageTokens(message: ModelMessage, tokenizer: Tokenizer): number {
  return messageTexts(message).reduce((sum, text) => sum + (text === '' ? 0 : tokenizer.count(text)), 0);
}

function messageTexts(message: ModelMessage): string[] {
  if (typeof message.content === 'string') return [message.content];
  const texts: string[] = [];
  for (const part of message.content as readonly Record<string, unknown>[]) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        texts.push(stringOf(part.text));
        break;
      case 'tool-call':
        texts.push(stringOf(part.toolName), jsonText(part.input));
        break;
      case 'tool-result':
        texts.push(stringOf(part.toolName), ...outputTexts(part.output));
        break;
      case 'image':
        texts.push(referenceText(part.image));
        break;
      case 'file':
      case 'reasoning-file':
        texts.push(stringOf(part.filename), referenceText(part.data));
        break;
      case 'tool-approval-request':
      case 'tool-approval-response':
        texts.push(stringOf(part.reason));
        break;
      default:
        break;
    }
  }
  return texts;
}

function outputTexts(output: unknown): string[] {
  if (output === null || typeof output !== 'object') return [];
  const { type, value, reason } = output as { type?: unknown; value?: unknown; reason?: unknown };
  switch (type) {
    case 'text':
    case 'error-text':
      return [stringOf(value)];
    case 'json':
    case 'error-json':
      return [jsonText(value)];
    case 'execution-denied':
      return [stringOf(reason)];
    case 'content':
      return Array.isArray(value)
        ? value.map((item: { type?: unknown; text?: unknown; filename?: unknown; data?: unknown }) =>
            item.type === 'text' ? stringOf(item.text) : `${stringOf(item.filename)}${referenceText(item.data)}`,
          )
        : [];
    default:
      return [];
  }
}

/** The readable part of file data: a URL or inline text; raw bytes count as nothing. */
function referenceText(data: unknown): string {
  if (data instanceof URL) return data.href;
  if (data === null || typeof data !== 'object') return '';
  const tagged = data as { type?: unknown; url?: unknown; text?: unknown };
  if (tagged.type === 'url') return tagged.url instanceof URL ? tagged.url.href : stringOf(tagged.url);
  if (tagged.type === 'text') return stringOf(tagged.text);
  return '';
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}
