import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { pyJson } from '../../text.ts';
import { LANGUAGE_NAMES, LANGUAGES, SENTENCES, type Language } from '../multilingual.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import { COMPANIES, REVIEW_FILES, REVIEW_FINDINGS, startCrew, type CallStyle } from './crew.ts';

/** One sub-agent given different items: chunks, files, companies; or one item to different agents. */
export function maDelegationItems(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['translate-chunks', 'review-files', 'company-briefs', 'fan-out'] as const, ctx.index);
  const style: CallStyle = ctx.index % 3 === 0 ? 'tool' : 'delegation';
  const rng = ctx.rng;
  const lang = rng.pick(LANGUAGES) as Language;
  const files = rng.sample(REVIEW_FILES, rng.int(4, 8));
  const firms = rng.sample(COMPANIES, rng.int(4, 7));
  const task = {
    'translate-chunks': `Translate the quick-start section of the manual into ${LANGUAGE_NAMES[lang]}.`,
    'review-files': `Review the files changed in PR #${rng.int(200, 900)} and summarise the blocking issues.`,
    'company-briefs': `Make a comparison table of ${firms.map((f) => f.name).join(', ')}.`,
    'fan-out': `Get independent reviews of ${files[0]} from the security, performance and style reviewers.`,
  }[kind];
  const crew = startCrew(ctx, { variant: kind, task, style });
  const { b } = crew;
  const calls: number[] = [];
  if (kind === 'translate-chunks') {
    const chunks = rng.sample(SENTENCES, rng.int(4, 8));
    chunks.forEach((s, i) => {
      calls.push(
        crew.ask('translator', `Translate chunk ${i + 1}/${chunks.length} into ${LANGUAGE_NAMES[lang]}: "${s.en}"`, s.translations[lang], {
          say: i === 0 ? 'I will send the section chunk by chunk.' : rng.pick(['', `Chunk ${i + 1}.`]),
        }),
      );
    });
    b.model(chunks.map((s) => s.translations[lang]).join('\n'));
  } else if (kind === 'review-files') {
    files.forEach((f, i) => {
      calls.push(
        crew.ask(
          'code_reviewer',
          `Review ${f} for bugs and security issues.`,
          `Review of ${f}:\n${
            rng
              .sample(REVIEW_FINDINGS, rng.int(0, 3))
              .map((x, j) => `${j + 1}. ${x} (line ${rng.int(5, 200)})`)
              .join('\n') || 'No issues found.'
          }`,
          { say: i === 0 ? 'Sending each changed file to the reviewer.' : '' },
        ),
      );
    });
    b.model(`Blocking issues found in ${rng.int(1, files.length)} of ${files.length} files; details above.`);
  } else if (kind === 'company-briefs') {
    firms.forEach((f, i) => {
      calls.push(
        crew.ask(
          'research_agent',
          `Find HQ, sector, 2023 revenue, headcount and CEO of ${f.name}.`,
          `${f.name}: HQ ${f.hq}; sector ${f.sector}; revenue ${f.revenue}; ~${f.employees} employees; CEO ${f.ceo}.`,
          { say: i === 0 ? 'Researching each company.' : '' },
        ),
      );
    });
    b.model(
      `| Company | HQ | Revenue | Employees |\n|---|---|---|---|\n${firms.map((f) => `| ${f.name} | ${f.hq} | ${f.revenue} | ${f.employees} |`).join('\n')}`,
    );
  } else {
    const input = `Review ${files[0]} and list the issues you find.`;
    for (const reviewer of ['security_reviewer', 'performance_reviewer', 'style_reviewer']) {
      calls.push(
        crew.ask(
          reviewer,
          input,
          `${reviewer.replace('_', ' ')} on ${files[0]}:\n${rng
            .sample(REVIEW_FINDINGS, 2)
            .map((x, j) => `${j + 1}. ${x}`)
            .join('\n')}`,
          { say: '' },
        ),
      );
    }
    b.model('Merged the three reviews; two issues overlap.');
  }
  b.outcome({ completed: true });
  b.note(
    `${calls.length} sub-agent calls (steps ${calls.join(', ')}) ${kind === 'fan-out' ? 'with the same input to different agents' : 'to the same agent with a different item each time'}; every answer is new`,
  );
  return b.build();
}

/** A batch job started by the orchestrator and polled until done. */
export function maPolling(ctx: ScenarioContext): CorpusTrajectory {
  const crew = startCrew(ctx, {
    variant: 'job polling',
    task: 'Re-embed the support knowledge base with the new embedding model and report when it is searchable.',
    style: 'tool',
  });
  const { b, rng } = crew;
  const jobId = `job_${rng.hex(10)}`;
  const total = rng.int(8000, 40000);
  b.model('Starting the re-embedding job.');
  b.call('start_job', { kind: 'reembed', collection: 'support-kb', model: 'text-embedding-3-large' }, pyJson({ job_id: jobId, status: 'queued' }));
  const polls = rng.int(3, 7);
  const calls: number[] = [];
  for (let p = 0; p < polls; p++) {
    if (p > 0) {
      b.model('');
      b.call('wait', { seconds: rng.pick([30, 60, 120]) }, 'waited');
    }
    const done = p === polls - 1 ? total : Math.round(((total * p) / (polls - 1)) * rng.float(0.8, 1));
    b.model(p === 0 ? '' : rng.pick(['', 'Checking progress.']));
    calls.push(
      b.call(
        'get_job_status',
        { job_id: jobId },
        pyJson({
          job_id: jobId,
          status: p === 0 ? 'queued' : p === polls - 1 ? 'succeeded' : 'running',
          processed: done,
          total,
          eta_seconds: p === polls - 1 ? 0 : rng.int(60, 900),
        }),
      ),
    );
  }
  b.model(`The knowledge base is re-embedded (${total} chunks) and searchable.`);
  b.outcome({ completed: true });
  b.note(`get_job_status polled ${polls}x with the same job id (steps ${calls.join(', ')}), waits in between, progress changing every time`);
  return b.build();
}

/** Translations into non-Latin scripts, a different chunk each time. */
export function maNonLatinVaried(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index) as Language;
  const style: CallStyle = ctx.index % 2 === 0 ? 'delegation' : 'tool';
  const crew = startCrew(ctx, {
    variant: `${LANGUAGE_NAMES[lang]} review of translations`,
    task: `Check the ${LANGUAGE_NAMES[lang]} manual for mistranslations.`,
    style,
  });
  const { b, rng } = crew;
  const chunks = rng.sample(SENTENCES, rng.int(3, 6));
  const calls = chunks.map((s) => crew.ask('translation_checker', s.translations[lang], `OK: "${s.translations[lang]}" matches "${s.en}".`, { say: '' }));
  b.model(`All ${chunks.length} ${LANGUAGE_NAMES[lang]} sentences were checked; no mistranslations.`);
  b.outcome({ completed: true });
  b.note(`${calls.length} calls with different ${LANGUAGE_NAMES[lang]} inputs (steps ${calls.join(', ')})`);
  return b.build();
}

/** The orchestrator's status reports share a layout but not content. */
export function maStructuredText(ctx: ScenarioContext): CorpusTrajectory {
  const crew = startCrew(ctx, {
    variant: 'per-company tables',
    task: 'Prepare a due-diligence sheet for each of our three acquisition targets.',
    style: 'delegation',
  });
  const { b, rng } = crew;
  const texts: number[] = [];
  // Each sheet goes out with the next request, as one model turn.
  let pending = '';
  for (const f of rng.sample(COMPANIES, rng.int(3, 5))) {
    if (pending !== '') texts.push(b.length);
    crew.ask('research_agent', `Key facts about ${f.name}.`, `${f.name}: ${f.sector}, ${f.hq}, ${f.revenue}, ${f.employees} employees, CEO ${f.ceo}.`, {
      say: pending,
    });
    pending = `## ${f.name}\n\n| Item | Value |\n|---|---|\n| Sector | ${f.sector} |\n| HQ | ${f.hq} |\n| Revenue | ${f.revenue} |\n| Employees | ${f.employees} |\n\n- Risk: ${rng.pick(['customer concentration', 'key-person dependency', 'regulatory exposure'])}\n- Next: ${rng.pick(['request audited accounts', 'interview CFO', 'check litigation'])}`;
  }
  texts.push(b.model(pending));
  b.outcome({ completed: true });
  b.note(`${texts.length} orchestrator texts with the same table layout about different companies`);
  return b.build();
}

/** A long orchestration whose context is compacted several times. */
export function maCompaction(ctx: ScenarioContext): CorpusTrajectory {
  const crew = startCrew(ctx, {
    variant: 'compaction',
    task: 'Review every file of the release branch and compile the release notes.',
    style: ctx.index % 2 === 0 ? 'delegation' : 'tool',
    tokens: 'counted',
  });
  const { b, rng } = crew;
  const threshold = rng.int(14000, 22000);
  let compactions = 0;
  const files = [
    ...REVIEW_FILES,
    ...REVIEW_FILES.map((f) => f.replace('src/', 'packages/core/src/')),
    ...REVIEW_FILES.map((f) => f.replace('src/', 'packages/web/src/')),
  ];
  for (const [i, f] of files.entries()) {
    crew.ask(
      'code_reviewer',
      `Review ${f} and list user-visible changes.`,
      `Changes in ${f}:\n- ${rng.pick(REVIEW_FINDINGS)} fixed\n- ${rng.pick(['new option', 'renamed flag', 'faster path', 'better error message'])}`,
      { say: '', fullChars: rng.int(5000, 14000) },
    );
    if (b.contextTokens > threshold) {
      compactions++;
      b.compact(`Release notes draft after ${i + 1} files: ${rng.int(3, 12)} user-visible changes collected.`, {
        keepTokens: rng.int(500, 1500),
        visible: rng.chance(0.6),
      });
    }
  }
  if (compactions < 2) throw new Error(`${ctx.id}: only ${compactions} compactions`);
  b.model('Release notes compiled.');
  b.outcome({ completed: true });
  b.note(`${files.length} different files reviewed; context compacted ${compactions}x (rise and fall)`);
  return b.build();
}

/** A sub-agent that times out once or twice, then answers. */
export function maBoundedRetry(ctx: ScenarioContext): CorpusTrajectory {
  const crew = startCrew(ctx, {
    variant: 'sub-agent timeouts then success',
    task: 'Summarise the three most recent incidents for the weekly report.',
    style: 'tool',
  });
  const { b, rng } = crew;
  const fails = rng.int(1, 2);
  for (let k = 0; k < fails; k++)
    crew.ask(
      'incident_agent',
      'Summarise the three most recent incidents.',
      rng.pick(['Error: sub-agent timed out after 120s', 'Error: 429 rate limited by model provider, retry after 30s', 'Error: upstream model returned 503']),
      { say: k === 0 ? 'Asking the incident agent.' : 'Transient error; retrying.', error: true },
    );
  crew.ask(
    'incident_agent',
    'Summarise the three most recent incidents.',
    'INC-2291: checkout latency (45 min). INC-2288: delayed emails (2 h). INC-2285: stale search index (30 min).',
    { say: 'Retrying once more.' },
  );
  b.model('Weekly report: 3 incidents, all resolved; see summaries above.');
  b.outcome({ completed: true });
  b.note(`${fails} transient sub-agent failure(s) then success: a bounded retry`);
  return b.build();
}
