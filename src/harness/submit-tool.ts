import { tool, type Tool } from 'ai';
import { z } from 'zod';

/** An AI SDK tool that ends the tool loop with its own result. */
export type ReturnDirectTool<INPUT, OUTPUT> = Tool<INPUT, OUTPUT> & { readonly returnDirect: true };

/**
 * The finish tool: the model calls it with a summary when the task is done.
 * It is return-direct and loop-ending (`endsLoop`), so the ToolCallAdvisor
 * ends the loop with the summary as the result instead of sending it back to
 * the model — also when the model called other tools in the same answer:
 * those run, and no model call follows.
 */
export function submitTool(): ReturnDirectTool<{ summary: string }, string> & { readonly endsLoop: true } {
  const submit = tool({
    description:
      'Call when the task is done (or cannot be done), with a short summary of what you did and the outcome. ' + 'This ends your work: nothing runs after it.',
    inputSchema: z.object({ summary: z.string().describe('What was done, and the result.') }),
    execute: ({ summary }) => summary,
  });
  return Object.assign(submit, { returnDirect: true as const, endsLoop: true as const });
}
