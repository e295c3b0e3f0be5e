import type { ModelMessage } from 'ai';

/**
 * One conversation with every message kind and every part a repository must
 * carry: system; user text, image bytes (Uint8Array and Buffer), file by URL,
 * tagged file data; assistant reasoning, text and tool calls (one whose input
 * looks like a codec tag); tool results as text, JSON, error text, error JSON
 * and content with a file; tool approval request and response; provider
 * options on messages and parts; a string with characters outside ASCII and
 * a NUL character.
 */
export function sampleConversation(): ModelMessage[] {
  return [
    { role: 'system', content: 'You are terse.', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in this picture? 日本語で答えて ✓ \u0000 end' },
        { type: 'image', image: new Uint8Array([0, 1, 2, 127, 128, 254, 255]), mediaType: 'image/png' },
        { type: 'image', image: Buffer.from('GIF89a'), mediaType: 'image/gif' },
        {
          type: 'file',
          data: new URL('https://example.com/reports/q3.pdf?x=1#p2'),
          mediaType: 'application/pdf',
          filename: 'q3.pdf',
        },
        {
          type: 'file',
          data: { type: 'data', data: new Uint8Array([104, 105]) },
          mediaType: 'text/plain',
          providerOptions: { openai: { detail: 'low' } },
        },
        { type: 'file', data: { type: 'url', url: new URL('https://example.com/a.txt') }, mediaType: 'text' },
      ],
      providerOptions: { openai: { user: 'u-1' } },
    },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Check the weather first.', providerOptions: { anthropic: { signature: 'sig-1' } } },
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool-call',
          toolCallId: 'call-1',
          toolName: 'weather',
          input: { city: 'Zürich', days: [1, 2.5, -3], nested: { $governor: 'bytes', base64: 'not a tag' }, none: null },
        },
        { type: 'tool-call', toolCallId: 'call-2', toolName: 'lookup', input: { id: 7 } },
        { type: 'tool-call', toolCallId: 'call-3', toolName: 'fail', input: {} },
        { type: 'tool-call', toolCallId: 'call-4', toolName: 'fail-json', input: {} },
        { type: 'tool-call', toolCallId: 'call-5', toolName: 'chart', input: { kind: 'bar' }, providerExecuted: false },
        { type: 'tool-approval-request', approvalId: 'approval-1', toolCallId: 'call-6', reason: 'deletes files' },
      ],
    },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call-1', toolName: 'weather', output: { type: 'text', value: 'Sunny, 21 °C' } },
        {
          type: 'tool-result',
          toolCallId: 'call-2',
          toolName: 'lookup',
          output: { type: 'json', value: { found: true, tags: ['a', 'b'], score: 0.5, none: null } },
        },
        { type: 'tool-result', toolCallId: 'call-3', toolName: 'fail', output: { type: 'error-text', value: 'boom' } },
        {
          type: 'tool-result',
          toolCallId: 'call-4',
          toolName: 'fail-json',
          output: { type: 'error-json', value: { status: 503, retryable: true } },
        },
        {
          type: 'tool-result',
          toolCallId: 'call-5',
          toolName: 'chart',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'Here is the chart.' },
              { type: 'file', data: { type: 'data', data: new Uint8Array([9, 8, 7]) }, mediaType: 'image/png' },
            ],
          },
        },
        { type: 'tool-approval-response', approvalId: 'approval-1', approved: false, reason: 'not now' },
      ],
    },
    { role: 'assistant', content: 'It is sunny in Zürich.' },
  ];
}

/** A user message with plain text. */
export function userText(text: string): ModelMessage {
  return { role: 'user', content: text };
}

/** An assistant message that calls one tool, and the tool message with its result. */
export function toolExchange(toolCallId: string, result = 'ok'): [ModelMessage, ModelMessage] {
  return [
    {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId, toolName: 'lookup', input: { id: toolCallId } }],
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId, toolName: 'lookup', output: { type: 'text', value: result } }],
    },
  ];
}
