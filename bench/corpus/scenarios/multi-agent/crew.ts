import type { Rng } from '../../prng.ts';
import type { TrajectoryBuilder } from '../../trajectory-builder.ts';
import { startTrajectory, type ScenarioContext } from '../scenario.ts';

/**
 * An orchestrator and its sub-agents. A sub-agent call is written either
 * as a `delegation` step or as a `tool_call` whose tool is the sub-agent
 * (both occur in real frameworks).
 */
export type CallStyle = 'delegation' | 'tool';

export class Crew {
  readonly b: TrajectoryBuilder;
  readonly style: CallStyle;

  constructor(b: TrajectoryBuilder, style: CallStyle) {
    this.b = b;
    this.style = style;
  }

  get rng(): Rng {
    return this.b.rng;
  }

  /** The orchestrator's model step, then the sub-agent call. */
  ask(agent: string, input: string, output: string, options: { say?: string | null; fullChars?: number; error?: boolean } = {}): number {
    if (options.say !== null) this.b.model(options.say ?? '');
    if (this.style === 'delegation' && !options.error)
      return this.b.delegation(agent, input, output, options.fullChars === undefined ? {} : { fullChars: options.fullChars });
    return this.b.call(agent, { task: input }, output, {
      error: options.error ?? false,
      ...(options.fullChars === undefined ? {} : { fullChars: options.fullChars }),
    });
  }
}

export interface CrewSetup {
  readonly variant: string;
  readonly task: string;
  readonly style: CallStyle;
  /** @default counted for 85% of the runs */
  readonly tokens?: 'counted' | 'null';
  /** @default 1,800–3,600 */
  readonly systemTokens?: number;
}

/** Starts an orchestrator session: token accounting, the user's task. */
export function startCrew(ctx: ScenarioContext, setup: CrewSetup): Crew {
  const b = startTrajectory(ctx, {
    variant: `${setup.variant}; ${setup.style === 'delegation' ? 'delegation steps' : 'sub-agent as tool'}`,
    task: setup.task,
    tokens: setup.tokens ?? (ctx.rng.chance(0.15) ? 'null' : 'counted'),
    systemTokens: setup.systemTokens ?? ctx.rng.int(1800, 3600),
    reasoning: [0, 120],
  });
  b.user(setup.task);
  return new Crew(b, setup.style);
}

export interface Company {
  readonly name: string;
  readonly hq: string;
  readonly sector: string;
  readonly revenue: string;
  readonly employees: number;
  readonly ceo: string;
}

export const COMPANIES: readonly Company[] = [
  { name: 'Northwind Traders', hq: 'Seattle, WA', sector: 'food distribution', revenue: 'USD 412 million (FY2023)', employees: 1850, ceo: 'Laura Callahan' },
  { name: 'Contoso Robotics', hq: 'Austin, TX', sector: 'warehouse automation', revenue: 'USD 1.3 billion (FY2023)', employees: 5200, ceo: 'Miguel Reyes' },
  { name: 'Fabrikam Health', hq: 'Boston, MA', sector: 'medical devices', revenue: 'USD 860 million (FY2023)', employees: 3100, ceo: 'Aisha Patel' },
  { name: 'Tailspin Air', hq: 'Denver, CO', sector: 'regional aviation', revenue: 'USD 2.1 billion (FY2023)', employees: 7400, ceo: 'Robert Hale' },
  { name: 'Woodgrove Bank', hq: 'Charlotte, NC', sector: 'retail banking', revenue: 'USD 5.6 billion (FY2023)', employees: 21000, ceo: 'Helen Ng' },
  { name: 'Litware Systems', hq: 'San Jose, CA', sector: 'developer tools', revenue: 'USD 240 million (FY2023)', employees: 960, ceo: 'Dan Okafor' },
  { name: 'Adatum Energy', hq: 'Houston, TX', sector: 'solar installation', revenue: 'USD 690 million (FY2023)', employees: 2700, ceo: 'Sofia Lindqvist' },
  { name: 'Proseware Labs', hq: 'Cambridge, UK', sector: 'bioinformatics', revenue: 'GBP 95 million (FY2023)', employees: 410, ceo: 'James Whitfield' },
  { name: 'Alpine Ski House', hq: 'Zurich, CH', sector: 'hospitality', revenue: 'CHF 180 million (FY2023)', employees: 1300, ceo: 'Nina Baumann' },
  { name: 'Blue Yonder Freight', hq: 'Rotterdam, NL', sector: 'logistics', revenue: 'EUR 1.1 billion (FY2023)', employees: 6100, ceo: 'Pieter de Vries' },
];

/** Private or obscure firms the research agent cannot find figures for. */
export const UNKNOWN_FIRMS = [
  'Grayline Holdings GmbH',
  'Keystone Pallet Co.',
  'Oakridge Micro LLC',
  'Pemberton & Sons Ltd',
  'Silverleaf Dental Group',
  'Harbor Crest Logistics',
];

export const REVIEW_FILES = [
  'src/auth/session.ts',
  'src/api/orders.ts',
  'src/db/migrations/042_add_refunds.sql',
  'src/workers/email.ts',
  'src/lib/money.ts',
  'src/api/webhooks.ts',
  'src/config/index.ts',
  'src/cache/redis.ts',
  'src/jobs/reconcile.ts',
  'src/ui/CheckoutForm.tsx',
];

export const REVIEW_FINDINGS = [
  'no input validation on the request body',
  'floating-point arithmetic used for money',
  'secret logged at debug level',
  'missing index on a foreign key',
  'unbounded retry loop without backoff',
  'race between read and write of the session',
  'error swallowed in catch block',
  'SQL built with string concatenation',
  'timeout missing on outbound HTTP call',
  'N+1 query inside the loop',
  'cache key ignores tenant id',
  'form submits twice on double click',
];
