/**
 * The AgentBreaker for the OpenAI Agents SDK (`Agent`, `run`). Needs the
 * optional peer package `@openai/agents`.
 *
 * @module
 */
// First: an unsupported Node fails here with one clear line.
import '../runtime/assert-supported-node.ts';
import { importOptional } from '../runtime/import-optional.ts';
import type { GovernedRunStop as RunStop } from './governed-runner.ts';

// Checked before the adapter module loads, so a missing package is a typed error naming it.
await importOptional('@openai/agents', 'agent-governor/openai-agents', () => import('@openai/agents'));

const adapter = await import('./governed-runner.ts');

/** {@inheritDoc breakerForOpenAIAgents} */
export const breakerForOpenAIAgents: typeof adapter.breakerForOpenAIAgents = adapter.breakerForOpenAIAgents;
/** {@inheritDoc GovernedRunStop} */
export const GovernedRunStop: typeof adapter.GovernedRunStop = adapter.GovernedRunStop;
/** {@inheritDoc GovernedRunStop} */
export type GovernedRunStop = RunStop;
export type { OpenAIAgentsBreaker, OpenAIAgentsBreakerOptions } from './governed-runner.ts';
