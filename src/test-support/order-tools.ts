import { tool } from 'ai';
import { z } from 'zod';

/**
 * Two tools of an order desk for approval tests: `lookup` always runs, `refund`
 * needs the caller's approval above 100. Each run is recorded in `ran`.
 */
export function orderTools(ran: string[]) {
  return {
    lookup: tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        ran.push(`lookup ${id}`);
        return `order ${id}: shipped`;
      },
    }),
    refund: tool({
      inputSchema: z.object({ id: z.string(), amount: z.number() }),
      needsApproval: async ({ amount }) => amount > 100,
      execute: async ({ id, amount }) => {
        ran.push(`refund ${id} ${amount}`);
        return `refunded ${amount} on ${id}`;
      },
    }),
  };
}
