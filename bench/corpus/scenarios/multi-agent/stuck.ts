import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { EMPTY_REPLIES, LANGUAGE_NAMES, LANGUAGES, SENTENCES, type Language } from '../multilingual.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import type { Rng } from '../../prng.ts';
import { COMPANIES, REVIEW_FILES, REVIEW_FINDINGS, startCrew, UNKNOWN_FIRMS, type CallStyle } from './crew.ts';

interface LoopSpec {
  readonly agent: string;
  readonly task: string;
  readonly asks: readonly string[];
  readonly answer: string;
  readonly alt: string;
  readonly recover: string;
}

function loopSpec(rng: Rng, kind: 'research' | 'review' | 'sql'): LoopSpec {
  if (kind === 'research') {
    const firm = rng.pick(UNKNOWN_FIRMS);
    const answer = `I searched company registries, press releases and news coverage but could not find a reliable 2023 revenue figure for ${firm}. The company is privately held and does not publish financial statements. The closest data point is a 2019 trade-press estimate of "around EUR 40 million", which is too old to use.`;
    return {
      agent: rng.pick(['research_agent', 'web_researcher']),
      task: `Write a one-page brief on ${firm}, including its 2023 revenue.`,
      asks: [
        `Find the 2023 annual revenue of ${firm}.`,
        `Please search again for ${firm}'s revenue in 2023.`,
        `Look for the 2023 revenue of ${firm} once more; check all sources.`,
        `Find ${firm} 2023 annual revenue.`,
        `I need ${firm}'s 2023 revenue. Search again.`,
      ],
      answer,
      alt: answer.replace('I searched', 'I have searched').replace('could not find', 'was unable to find'),
      recover: `${firm} does not publish its revenue; the brief will state "not disclosed" and cite the 2019 estimate as outdated.`,
    };
  }
  if (kind === 'review') {
    const file = rng.pick(REVIEW_FILES);
    const findings = rng.sample(REVIEW_FINDINGS, 3);
    const answer = `Review of ${file}:\n1. ${findings[0]} (line ${rng.int(10, 60)})\n2. ${findings[1]} (line ${rng.int(61, 120)})\n3. ${findings[2]} (line ${rng.int(121, 200)})\nOverall: request changes.`;
    return {
      agent: rng.pick(['code_reviewer', 'review_agent']),
      task: `Get ${file} reviewed and make sure the review is thorough.`,
      asks: [
        `Review ${file} for bugs and security issues.`,
        `Review ${file} again, more thoroughly.`,
        `Please do a deeper review of ${file}.`,
        `Review ${file} for bugs and security issues.`,
        `Check ${file} once more for anything you missed.`,
      ],
      answer,
      alt: answer,
      recover: `The review of ${file} found 3 issues; I'll summarise them rather than asking for the same review again.`,
    };
  }
  const table = rng.pick(['orders_2023', 'customer_churn', 'revenue_daily']);
  const answer = `Error running query: relation "${table}" does not exist. Available tables: orders, customers, invoices, revenue_monthly.`;
  return {
    agent: rng.pick(['sql_analyst', 'data_agent']),
    task: `What was the monthly churn rate last quarter? Use the analytics database.`,
    asks: [
      `Compute monthly churn for last quarter from ${table}.`,
      `Query ${table} again for last quarter's monthly churn.`,
      `Retry: monthly churn last quarter from ${table}.`,
      `Use ${table} to get monthly churn for Q2.`,
    ],
    answer,
    alt: answer,
    recover: `The table ${table} does not exist; I'll ask the analyst to use customers and invoices instead.`,
  };
}

function delegationLoop(ctx: ScenarioContext, style: CallStyle): CorpusTrajectory {
  const kind = cycle(['research', 'review', 'sql'] as const, ctx.index);
  const recovers = ctx.index % 3 !== 2;
  const spec = loopSpec(ctx.rng, kind);
  const crew = startCrew(ctx, { variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}`, task: spec.task, style });
  const { b, rng } = crew;
  if (rng.chance(0.5))
    crew.ask('planner', `Break down: ${spec.task}`, `1. Gather facts with ${spec.agent}.\n2. Draft the answer.\n3. Review the draft.`, {
      say: 'Let me plan this first.',
    });
  // Useful delegations first, so the loop starts at different points.
  for (const f of rng.sample(COMPANIES, rng.pick([0, 1, 2, 3])))
    crew.ask(
      kind === 'research' ? spec.agent : 'research_agent',
      `Find the headquarters and sector of ${f.name} (peer for comparison).`,
      `${f.name}: HQ ${f.hq}; sector ${f.sector}.`,
      { say: rng.pick(['', 'Collecting peer data first.']) },
    );
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    indices.push(
      crew.ask(spec.agent, cycle(spec.asks, k), k % 3 === 2 ? spec.alt : spec.answer, {
        say:
          k === 0
            ? `I'll delegate this to ${spec.agent}.`
            : cycle(
                ['The answer is not good enough. Let me ask again.', 'Let me ask the agent to try again.', '', 'I need this information; asking again.'],
                k + ctx.index,
              ),
      }),
    );
    if (k === 2) b.stuck('delegation_loop', indices[2] as number);
  }
  if (recovers) {
    b.model(spec.recover);
    b.outcome({ completed: true });
  } else {
    b.outcome({ completed: false, stop_reason: rng.pick(['max_turns', 'budget_exceeded']) });
  }
  b.note(
    `${spec.agent} re-asked the same thing ${repeats}x (steps ${indices.join(', ')}) and answered the same each time${recovers ? '; the orchestrator then accepts the answer' : ''}`,
  );
  return b.build();
}

/** A sub-agent re-asked the same thing, as `delegation` steps. */
export function maDelegationLoop(ctx: ScenarioContext): CorpusTrajectory {
  return delegationLoop(ctx, 'delegation');
}

/** A sub-agent re-asked the same thing, called as a tool. */
export function maSubagentToolLoop(ctx: ScenarioContext): CorpusTrajectory {
  return delegationLoop(ctx, 'tool');
}

/** Planner and critic handing the same plan and the same objection back and forth. */
export function maPlannerCritic(ctx: ScenarioContext): CorpusTrajectory {
  const style: CallStyle = ctx.index % 2 === 0 ? 'delegation' : 'tool';
  const crew = startCrew(ctx, {
    variant: 'planner/critic ping-pong',
    task: 'Plan the migration of the billing service from MySQL to PostgreSQL with zero downtime.',
    style,
  });
  const { b, rng } = crew;
  const plan =
    'Plan v1:\n1. Set up logical replication MySQL → PostgreSQL with a CDC tool.\n2. Dual-write from the billing service behind a flag.\n3. Backfill and verify row counts nightly.\n4. Switch reads, then writes; keep MySQL as fallback for 2 weeks.';
  const critique =
    'The plan does not say how in-flight transactions are handled at the moment of the write switch, nor how to roll back if PostgreSQL lags. Please revise.';
  const rounds = rng.int(3, 5);
  const starts: number[] = [];
  for (let r = 0; r < rounds; r++) {
    starts.push(
      crew.ask(
        'planner',
        r === 0 ? 'Draft a zero-downtime migration plan for billing (MySQL → PostgreSQL).' : `Revise the plan to address the critique: ${critique}`,
        plan,
        { say: r === 0 ? 'Asking the planner for a first draft.' : 'Sending the critique back to the planner.' },
      ),
    );
    crew.ask('critic', `Critique this plan:\n${plan}`, critique, { say: '' });
    if (r === 2) b.stuck('delegation_loop', starts[2] as number);
  }
  b.model(rng.chance(0.5) ? `The planner keeps returning the same plan. Here is the plan with the open questions flagged:\n${plan}\nOpen: ${critique}` : '');
  b.outcome({ completed: false });
  b.note(
    `planner → critic cycle of period 2 repeated ${rounds}x (planner calls at steps ${starts.join(', ')}); the planner returns the identical plan and the critic the identical objection`,
  );
  return b.build();
}

/** The orchestrator pastes everything so far into each delegation; context grows ≥ 1.35× per call. */
export function maTokenDrift(ctx: ScenarioContext): CorpusTrajectory {
  const style: CallStyle = ctx.index % 2 === 0 ? 'delegation' : 'tool';
  const crew = startCrew(ctx, {
    variant: 'growing hand-offs',
    task: 'Produce a competitor landscape for warehouse automation vendors in Europe.',
    style,
    tokens: 'counted',
    systemTokens: ctx.rng.int(3500, 4200),
  });
  const { b, rng } = crew;
  for (let i = 0; i < rng.int(3, 5); i++)
    crew.ask(
      'research_agent',
      `List European warehouse automation vendors, batch ${i + 1}, with one-paragraph profiles.`,
      `Vendors batch ${i + 1}: ${['Knapp', 'SSI Schaefer', 'Swisslog', 'TGW', 'Exotec', 'AutoStore', 'Jungheinrich', 'Dematic', 'Savoye', 'Vanderlande'].slice(i * 2, i * 2 + 3).join(', ')} — profiles follow.`,
      { say: '', fullChars: rng.int(1500, 3000) },
    );
  const start = b.length;
  b.model('To be thorough, I will give the research agent the complete material so far and ask for a fuller report.');
  b.stuckOnDriftFrom(start);
  const rounds = rng.int(4, 6);
  for (let k = 0; k < rounds; k++) {
    if (k > 0)
      b.model(
        cycle(
          [
            'The report is still incomplete. Sending everything again with the new report attached.',
            'Let me include all previous reports and ask for a complete version.',
            'Adding the full history so nothing is lost.',
          ],
          k,
        ),
      );
    const full = Math.round(b.contextTokens * rng.float(0.45, 0.7) * 4);
    crew.ask(
      'research_agent',
      `Here is everything gathered so far (${Math.round(full / 1000)}k characters). Produce the complete landscape report including all vendors, all previous reports and sources.`,
      `# Warehouse automation in Europe — full report (v${k + 1})\n\n## Vendors\n- Knapp (AT)\n- SSI Schaefer (DE)\n- Swisslog (CH)\n- TGW (AT)\n- Exotec (FR)\n- AutoStore (NO)\n\n## Previous reports (verbatim)\n…`,
      { say: null, fullChars: full },
    );
  }
  b.model('');
  b.outcome({ completed: false, error: 'context_length_exceeded' });
  b.note(
    `from step ${start} each hand-off includes all previous reports and the sub-agent returns them verbatim plus little new; prompt grows ≥1.35x per call`,
  );
  return b.build();
}

/** A translator asked for the same chunk again and again, returning the same non-Latin text. */
export function maNonLatinLoop(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index + 1) as Language;
  const style: CallStyle = ctx.index % 2 === 0 ? 'delegation' : 'tool';
  const s = cycle(SENTENCES, ctx.index);
  const crew = startCrew(ctx, {
    variant: `${LANGUAGE_NAMES[lang]} translation`,
    task: `Translate the product manual into ${LANGUAGE_NAMES[lang]}; it must read naturally.`,
    style,
  });
  const { b, rng } = crew;
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    indices.push(
      crew.ask(
        'translator',
        k === 0 ? `Translate into ${LANGUAGE_NAMES[lang]}: "${s.en}"` : `Translate into ${LANGUAGE_NAMES[lang]} again, more naturally: "${s.en}"`,
        s.translations[lang],
        {
          say:
            k === 0
              ? 'Sending the first sentence to the translator.'
              : rng.pick(['It should sound more natural. Asking again.', '', 'Let me get a more natural version.']),
        },
      ),
    );
    if (k === 2) b.stuck('delegation_loop', indices[2] as number);
  }
  b.model(s.translations[lang]);
  b.outcome({ completed: false });
  b.note(`translator asked ${repeats}x for the same sentence (steps ${indices.join(', ')}) and returns the identical ${LANGUAGE_NAMES[lang]} text each time`);
  return b.build();
}

/** The same delegation repeated across user turns that add nothing. */
export function maLoopAcrossTurns(ctx: ScenarioContext): CorpusTrajectory {
  const style: CallStyle = ctx.index % 2 === 0 ? 'tool' : 'delegation';
  const spec = loopSpec(ctx.rng, 'research');
  const crew = startCrew(ctx, { variant: 'user says ok between re-asks', task: spec.task, style });
  const { b, rng } = crew;
  const repeats = rng.int(3, 5);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0) {
      b.model(
        cycle(['The research agent could not find the figure. Should I keep trying?', 'Still no figure. Continue?', 'No luck yet. Want me to try again?'], k),
      );
      b.user(rng.pick(EMPTY_REPLIES.en));
    }
    indices.push(crew.ask(spec.agent, cycle(spec.asks, k), spec.answer, { say: '' }));
    if (k === 2) b.stuck('delegation_loop', indices[2] as number);
  }
  b.model(spec.recover);
  b.outcome({ completed: true });
  b.note(`${spec.agent} re-asked ${repeats}x (steps ${indices.join(', ')}) with the same answer; the user turns in between ("ok", "sure") add nothing`);
  return b.build();
}
