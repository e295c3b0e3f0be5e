import type { LanguageModelV4Prompt } from '@ai-sdk/provider';

/**
 * A model prompt as one short line per message, to compare what the model
 * was sent: `user: text`, `assistant: text`, `assistant -> weather`,
 * `tool weather: 15°C in Paris`, `system: ...`.
 */
export function promptLines(prompt: LanguageModelV4Prompt): string[] {
  return prompt.map((message) => {
    if (message.role === 'system') return `system: ${message.content}`;
    const pieces = message.content.map((part) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'tool-call':
          return `-> ${part.toolName}`;
        case 'tool-result':
          return `${part.toolName}: ${part.output.type === 'text' || part.output.type === 'error-text' ? part.output.value : JSON.stringify(part.output)}`;
        default:
          return `[${part.type}]`;
      }
    });
    return message.role === 'tool' ? `tool ${pieces.join(' | ')}` : `${message.role}: ${pieces.join(' | ')}`;
  });
}
