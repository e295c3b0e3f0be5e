import type { CallToolResult, CallToolResultContent, MCPServer } from '@openai/agents';
import type { RunJudged } from './built-in-tools.ts';

type Content = CallToolResult['content'];

/** What an MCP result says, as the breaker records it: its text blocks, else its structured content, else its blocks as JSON. */
function contentText(content: Content, structured: unknown): string {
  const texts = content.filter((part) => part.type === 'text' && typeof part['text'] === 'string').map((part) => String(part['text']));
  if (texts.length > 0 && texts.length === content.length) return texts.join('\n');
  if (content.length === 0 && structured !== undefined) return JSON.stringify(structured);
  return JSON.stringify(content);
}

/**
 * The content with the breaker's note added to its last text block (else as
 * a block of its own), keeping the metadata the SDK reads off the array
 * (`isError`, `structuredContent`, `_meta`, not enumerable there).
 */
function withNote(content: CallToolResultContent, note: string): CallToolResultContent {
  const parts = [...content];
  const last = parts.at(-1);
  if (last?.type === 'text' && typeof last['text'] === 'string') parts[parts.length - 1] = { ...last, text: `${last['text']}\n\n${note}` };
  else parts.push({ type: 'text', text: note });
  return withMetadata(parts, content);
}

function withMetadata(parts: Content, from: Partial<Pick<CallToolResultContent, 'isError' | 'structuredContent' | '_meta'>>): CallToolResultContent {
  for (const key of ['isError', 'structuredContent', '_meta'] as const) {
    if (from[key] !== undefined) Object.defineProperty(parts, key, { value: from[key], enumerable: false, configurable: true });
  }
  return parts as CallToolResultContent;
}

/**
 * An MCP server whose tool calls are judged: each call is judged before it
 * goes to the server (a refused one is answered with the breaker's note as an
 * error result) and recorded with what the server answered: an `isError`
 * result, or a call that failed outright, with its own error (so an outage's
 * 503 gets the allowance for transient errors). A steer joins the result's
 * last text block; a result the model reads as its structured content
 * (`useStructuredContent`) has no room for it, so it goes with the model's
 * next turn.
 *
 * Everything else is the server's own: the returned object forwards to it,
 * so connecting or closing either connects or closes the same server.
 */
export function governMcpServer<S extends MCPServer>(server: S, runJudged: RunJudged): S {
  const structuredOnly = (isError: boolean | undefined, structured: unknown) =>
    server.useStructuredContent === true && isError !== true && structured !== undefined;

  const callTool: MCPServer['callTool'] = (toolName, args, meta, options) =>
    runJudged<CallToolResultContent>({
      tool: toolName,
      args: args ?? {},
      run: () => server.callTool(toolName, args, meta, options),
      read: (content) => ({ text: contentText(content, content.structuredContent), error: content.isError === true }),
      refused: (note) => withMetadata([{ type: 'text', text: note }], { isError: true }),
      noted: (content, note) => (structuredOnly(content.isError, content.structuredContent) ? undefined : withNote(content, note)),
    });

  const callToolResult: MCPServer['callToolResult'] =
    server.callToolResult === undefined
      ? undefined
      : (toolName, args, meta, options) =>
          runJudged<CallToolResult>({
            tool: toolName,
            args: args ?? {},
            run: () => (server.callToolResult as NonNullable<MCPServer['callToolResult']>).call(server, toolName, args, meta, options),
            read: (result) => ({ text: contentText(result.content, result.structuredContent), error: result.isError === true }),
            refused: (note) => ({ content: [{ type: 'text', text: note }], isError: true }),
            noted: (result, note) =>
              structuredOnly(result.isError, result.structuredContent)
                ? undefined
                : { ...result, content: withNote(withMetadata(result.content, result), note) },
          });

  // Methods are bound to the server: implementations keep state in private fields a proxy cannot reach.
  const bound = new WeakMap<object, unknown>();
  return new Proxy(server, {
    get(target, key) {
      if (key === 'callTool') return callTool;
      if (key === 'callToolResult') return callToolResult;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (!bound.has(value)) bound.set(value, value.bind(target));
      return bound.get(value);
    },
  });
}
