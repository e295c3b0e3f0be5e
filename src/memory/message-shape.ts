/**
 * Checks the outline of a chat message (role and content container) and
 * returns what is wrong, or `undefined`. Part types are not checked one by one
 * on purpose: the AI SDK adds part types over time and memory must carry them
 * through unchanged.
 */
export function messageShapeProblem(message: unknown): string | undefined {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) {
    return 'expected a message object with a role and content';
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  switch (role) {
    case 'system':
      return typeof content === 'string' ? undefined : 'a system message needs string content';
    case 'user':
    case 'assistant':
      return typeof content === 'string' ? undefined : partsProblem(content, role);
    case 'tool':
      return partsProblem(content, role);
    default:
      return `unknown role ${JSON.stringify(role)}; expected system, user, assistant or tool`;
  }
}

function partsProblem(content: unknown, role: string): string | undefined {
  if (!Array.isArray(content)) {
    return role === 'tool' ? 'a tool message needs an array of parts as content' : `a ${role} message needs string content or an array of parts`;
  }
  for (let i = 0; i < content.length; i++) {
    const part: unknown = content[i];
    if (part === null || typeof part !== 'object' || typeof (part as { type?: unknown }).type !== 'string') {
      return `content[${i}] is not a part with a type`;
    }
  }
  return undefined;
}
