import { tool } from '@openai/agents';
import { z } from 'zod';

/**
 * A `restart_service` function tool that needs approval, as an operator's
 * agent has; `runs()` counts the restarts that ran. It answers with a health
 * check that keeps failing, so a model that restarts again and again loops.
 */
export function restartServiceTool(answer: (service: string) => string = (service) => `${service} restarted; health check still failing`) {
  let runs = 0;
  const restart = tool({
    name: 'restart_service',
    description: 'Restarts a service',
    parameters: z.object({ service: z.string() }),
    needsApproval: true,
    execute: async ({ service }) => {
      runs += 1;
      return answer(service);
    },
  });
  return { restart, runs: () => runs };
}
