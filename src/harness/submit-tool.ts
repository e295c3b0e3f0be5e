import { tool, type Tool } from 'ai';
import { z } from 'zod';

/** An AI SDK tool that ends the tool loop with its own result. */
export type ReturnDirectTool<INPUT, OUTPUT> = Tool<INPUT, OUTPUT> & { readonly returnDirect: true };

/**
 * The finish tool: the model calls it with a summary when the task is done.
 * It is return-direct, so the ToolCallAdvisor ends the loop with the summary as
 * the result instead of sending it back to the model.
 */
export function submitTool(): ReturnDirectTool<{ summary: string }, string> {
  const submit = tool({
    description:
      'Call when the task is done (or cannot be done), with a short summary of what you did and the outcome. ' + 'This ends your work: nothing runs after it.',
    inputSchema: z.object({ summary: z.string().describe('What was done, and the result.') }),
    execute: ({ summary }) => summary,
  });
  return Object.assign(submit, { returnDirect: true as const });
}
