import { tool } from 'ai';
import { z } from 'zod';

/** A flight search and a weather lookup for the AI SDK, run here, and what they ran. */
export function flightTools() {
  const ran: string[] = [];
  const run = (what: string, result: string): string => {
    ran.push(what);
    return result;
  };
  return {
    ran,
    tools: {
      search: tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => run(`search ${q}`, 'No flights found.') }),
      weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => run(`weather ${city}`, 'Sunny.') }),
    },
  };
}
