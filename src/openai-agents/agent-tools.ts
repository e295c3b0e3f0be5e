// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's own signatures use Agent<any, any> and Tool<any> (its generics are invariant); these mirror them so any agent fits.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Agent, type Tool } from '@openai/agents';

/**
 * The SDK's own record of which agent an `agent.asTool()` tool runs (the
 * tool keeps no reference to it). The SDK does not export it; it is read
 * from the module the SDK itself imports, so it is the same record.
 */
interface AgentToolRegistry {
  getAgentToolSourceAgent(tool: Tool<any>): Agent<any, any> | undefined;
  registerAgentToolSourceAgent(tool: Tool<any>, agent: Agent<any, any>): void;
}

async function loadRegistry(): Promise<AgentToolRegistry | undefined> {
  try {
    // Resolved from @openai/agents, which depends on @openai/agents-core (this package may not see it directly).
    const core = createRequire(fileURLToPath(import.meta.resolve('@openai/agents'))).resolve('@openai/agents-core');
    const registry = (await import(pathToFileURL(join(dirname(core), 'agentToolSourceRegistry.mjs')).href)) as Partial<AgentToolRegistry>;
    if (typeof registry.getAgentToolSourceAgent !== 'function' || typeof registry.registerAgentToolSourceAgent !== 'function') return undefined;
    // Only trusted if it is the record the SDK writes to (not a second copy of the SDK).
    const probe = new Agent({ name: 'agent-governor-probe' });
    return registry.getAgentToolSourceAgent(probe.asTool({ toolDescription: '' })) === probe ? (registry as AgentToolRegistry) : undefined;
  } catch {
    return undefined;
  }
}

const registry = await loadRegistry();

/**
 * Whether a tool was made by `agent.asTool()`: such a tool has an `on`
 * method for the nested run's events, which other function tools do not.
 */
function looksLikeAgentTool(tool: Tool<any>): boolean {
  return tool.type === 'function' && typeof (tool as { on?: unknown }).on === 'function';
}

/**
 * The agent an `agent.asTool()` tool runs: an agent object, `undefined` for
 * any other tool, and `null` for an agent tool whose agent cannot be known
 * (the SDK's record could not be read).
 */
export function agentOfTool(tool: Tool<any>): Agent<any, any> | undefined | null {
  const agent = registry?.getAgentToolSourceAgent(tool);
  if (agent !== undefined) return agent;
  return looksLikeAgentTool(tool) ? null : undefined;
}

/**
 * Records a governed copy of an agent tool as running the same agent, as the
 * SDK records the original: the SDK looks the agent up by the tool to save
 * and resume a run paused inside it (human approval in the nested run).
 */
export function copyAgentOfTool(original: Tool<any>, copy: Tool<any>): void {
  const agent = registry?.getAgentToolSourceAgent(original);
  if (agent !== undefined) registry?.registerAgentToolSourceAgent(copy, agent);
}
