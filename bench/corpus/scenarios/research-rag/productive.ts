import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { thirdDriftGrowth } from '../../trajectory-builder.ts';
import { LANGUAGE_NAMES, LANGUAGES, RESEARCH_QUESTIONS, type Language } from '../multilingual.ts';
import { cycle, startTrajectory, type ScenarioContext } from '../scenario.ts';
import { startResearch } from './researcher.ts';
import { TOPICS } from './topics.ts';

/** Queries refined step by step, each retrieving something new. */
export function ragRefined(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'refined queries' });
  const { b, rng, topic } = r;
  const steps: number[] = [r.retrieve(topic.paraphrases[0] as string, topic.fixationHits, { say: rng.pick(["I'll search the docs.", '']) })];
  const chain = rng.sample(topic.refinements, rng.int(3, topic.refinements.length));
  for (const x of chain)
    steps.push(
      r.retrieve(x.query, x.hits, {
        say: rng.pick([
          `That is general. Let me look specifically for ${x.query.split(' ').slice(0, 3).join(' ')}.`,
          'Narrowing the search.',
          '',
          'Next aspect.',
        ]),
      }),
    );
  b.model(topic.answer);
  b.outcome({ answered: true });
  b.note(`${steps.length} retrievals (steps ${steps.join(', ')}), each query about a different aspect and returning different passages`);
  return b.build();
}

/** The same query repeated after an outside event added documents. */
export function ragReingest(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'same query after ingestion' });
  const { b, rng, topic } = r;
  const q = topic.paraphrases[0] as string;
  const first = r.retrieve(q, topic.fixationHits, { say: '' });
  b.model(`The documentation only covers this in general terms (${topic.fixationHits[0]}). I could not find anything specific to your case.`);
  b.user(rng.pick([`I just uploaded our internal notes, can you search again?`, 'We added the runbook to the knowledge base a minute ago. Try again?']));
  b.user(topic.ingestEvent);
  r.ingest(topic.ingested);
  const second = r.retrieve(q, [...topic.ingested.map((p) => p.id), ...topic.fixationHits.slice(0, 2)], {
    say: 'New documents were ingested; running the same search again.',
  });
  const steps = [first, second];
  if (rng.chance(0.4)) {
    b.model(`The new document says: ${topic.ingested[0]?.text}`);
    b.user('[ingestion] re-index finished: 14 updated chunks in "' + topic.collection + '"');
    steps.push(
      r.retrieve(q, [...topic.ingested.map((p) => p.id), ...topic.fixationHits.slice(1, 3)], {
        say: 'The index was rebuilt; checking once more with the same query.',
      }),
    );
  }
  b.model(`${topic.ingested[0]?.text} ${topic.answer}`);
  b.outcome({ answered: true });
  b.note(`the same query at steps ${steps.join(', ')}, each repeat after an ingestion event (user step) that changes what can be retrieved; results differ`);
  return b.build();
}

/** Search results paged through; every page is new. */
export function ragPagination(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['page', 'offset', 'next-page'] as const, ctx.index);
  const r = startResearch(ctx, { variant: kind });
  const { b, rng, topic } = r;
  const pick = rng.pick(topic.refinements);
  const q = pick.query;
  const all = [...pick.hits.map((id) => r.passage(id)), ...topic.passages.filter((p) => !pick.hits.includes(p.id))];
  const pages = Math.min(rng.int(3, 5), Math.ceil(all.length / 2));
  const calls: number[] = [];
  for (let p = 0; p < pages; p++) {
    const slice = all.slice(p * 2, p * 2 + 2);
    const body =
      slice.map((x, i) => `${p * 2 + i + 1}. ${x.text.slice(0, 110)}… — https://docs.example.com/${topic.collection}/${x.id}`).join('\n') +
      (p < pages - 1 ? `\n(next: ${kind === 'next-page' ? 'call next_page' : `page ${p + 2}`})` : '\n(end of results)');
    b.model(p === 0 ? 'Searching.' : rng.pick(['', 'More results on the next page.', 'Let me see the next page.']));
    const args: Record<string, unknown> = kind === 'page' ? { query: q, page: p + 1 } : kind === 'offset' ? { query: q, offset: p * 2, limit: 2 } : {};
    calls.push(b.call(kind === 'next-page' && p > 0 ? 'next_page' : 'search_docs', kind === 'next-page' && p === 0 ? { query: q, limit: 2 } : args, body));
  }
  b.model(topic.answer);
  b.outcome({ answered: true });
  b.note(
    `${pages} pages of the same search (${kind === 'next-page' ? 'identical next_page {} calls' : kind}), steps ${calls.join(', ')}; each page lists different documents`,
  );
  return b.build();
}

/** Different queries in a non-Latin script, each with different passages. */
export function ragNonLatinVaried(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index) as Language;
  const q = cycle(RESEARCH_QUESTIONS[lang], Math.floor(ctx.index / 5));
  const b = startTrajectory(ctx, {
    variant: `${LANGUAGE_NAMES[lang]} refined queries`,
    task: q.question,
    tokens: 'counted',
    systemTokens: ctx.rng.int(1500, 3000),
  });
  b.user(q.question);
  const steps: number[] = [];
  q.queries.forEach((query, i) => {
    b.model('');
    steps.push(
      b.retrieval(query, [
        `[${lang}-doc-${i + 1}] (score 0.8${i}) ${q.passages[i % q.passages.length]}`,
        `[${lang}-doc-${i + 4}] (score 0.7${i}) ${q.passages[(i + 1) % q.passages.length]}`,
      ]),
    );
  });
  b.model(q.passages.join(' '));
  b.outcome({ answered: true });
  b.note(`${steps.length} different ${LANGUAGE_NAMES[lang]} queries (steps ${steps.join(', ')}) with different top passages`);
  return b.build();
}

/** A report with one table per source: same layout, different content. */
export function ragStructuredText(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'per-source tables' });
  const { b, rng, topic } = r;
  const texts: number[] = [];
  // Each table goes out with the next search, as one model turn.
  let pending = '';
  for (const x of rng.sample(topic.refinements, Math.min(4, topic.refinements.length))) {
    if (pending !== '') texts.push(b.length);
    r.retrieve(x.query, x.hits, { say: pending });
    const p = r.passage(x.hits[0] as string);
    pending = `### Source: \`${p.id}\`\n\n| Claim | Applies to us? | Confidence |\n|---|---|---|\n| ${p.text.split('.')[0]} | ${rng.pick(['yes', 'partly', 'unclear'])} | ${rng.pick(['high', 'medium', 'low'])} |\n\n- Query: _${x.query}_\n- Next: ${rng.pick(['check the config', 'confirm with logs', 'compare with our runbook'])}`;
  }
  texts.push(b.model(`${pending}\n\n**Answer.** ${topic.answer}`));
  b.outcome({ answered: true });
  b.note(`${texts.length} model texts with the same table layout about different sources; content differs`);
  return b.build();
}

/** Fetching different pages or papers one after another. */
export function ragIdSweep(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'fetch different urls' });
  const { b, rng, topic } = r;
  const ids = rng.sample(
    topic.passages.map((p) => p.id),
    rng.int(4, 7),
  );
  const calls: number[] = [];
  for (const id of ids) {
    b.model(rng.pick(['', `Reading ${id}.`]));
    calls.push(
      b.call(
        'fetch_url',
        { url: `https://docs.example.com/${topic.collection}/${id}` },
        `# ${id}\n\n${r.passage(id).text}\n\nSee also: ${rng.pick(topic.passages).id}`,
        { fullChars: rng.int(2500, 9000) },
      ),
    );
  }
  b.model(topic.answer);
  b.outcome({ answered: true });
  b.note(`fetch_url over ${ids.length} different pages (steps ${calls.join(', ')})`);
  return b.build();
}

/** A long support-research session over several questions; the context is compacted several times. */
export function ragCompaction(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'long session with compaction', tokens: 'counted' });
  const { b, rng } = r;
  const threshold = rng.int(16000, 26000);
  let compactions = 0;
  // The first question is the session's task; follow-up questions of other topics come as new user turns.
  const topics = [r.topic, ...rng.shuffle(TOPICS.filter((t) => t !== r.topic))];
  for (const [q, topic] of topics.entries()) {
    if (compactions >= 3) break;
    if (q > 0) b.user(`Next ticket: ${topic.question}`);
    for (const p of rng.sample(topic.passages, rng.int(3, 5))) {
      b.model(rng.pick(['', `Checking ${p.id}.`]));
      b.call('fetch_url', { url: `https://docs.example.com/${topic.collection}/${p.id}` }, `# ${p.id}\n\n${p.text}`, { fullChars: rng.int(5000, 16000) });
      if (b.contextTokens > threshold) {
        compactions++;
        b.compact(`Session notes: answered ${q} ticket(s) so far; current ticket: "${topic.question}". Relevant so far: ${p.id}.`, {
          keepTokens: rng.int(600, 2000),
          visible: rng.chance(0.7),
        });
      }
    }
    b.model(topic.answer);
  }
  if (compactions < 2) throw new Error(`${ctx.id}: only ${compactions} compactions`);
  b.outcome({ answered: true });
  b.note(
    `a support engineer's session over several questions, each reading different pages; the context is compacted ${compactions}x (tokens rise then drop to a summary)`,
  );
  return b.build();
}

/** The first retrievals bring large documents into a small context. */
export function ragEarlyGrowth(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'fast early growth', tokens: 'counted', systemTokens: 1200 + ctx.rng.int(0, 400) });
  const { b, rng, topic } = r;
  const pages = rng.sample(topic.passages, Math.min(5, topic.passages.length));
  for (const p of pages) {
    b.model('');
    b.call('fetch_url', { url: `https://docs.example.com/${topic.collection}/${p.id}` }, `# ${p.id}\n\n${p.text}`, {
      fullChars: Math.round(b.contextTokens * rng.float(0.5, 0.9) * 4),
    });
    if (thirdDriftGrowth([...b.steps, { kind: 'model', prompt_tokens: b.contextTokens, completion_tokens: 0, text: '' }], 0) !== undefined) break;
  }
  b.model(topic.answer);
  if (thirdDriftGrowth(b.steps, 0) === undefined) throw new Error(`${ctx.id}: no early growth`);
  b.outcome({ answered: true });
  b.note('the first model calls grow ≥1.35x each as full pages of different documents are loaded into a small context; then it answers');
  return b.build();
}

/** Fetches failing with 429/timeouts a few times, then succeeding. */
export function ragBoundedRetry(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: '429 and timeouts then success' });
  const { b, rng, topic } = r;
  const p = rng.pick(topic.passages);
  const url = `https://docs.example.com/${topic.collection}/${p.id}`;
  const fails = rng.int(1, 3);
  for (let k = 0; k < fails; k++) {
    b.model(k === 0 ? 'Let me read the page.' : 'Rate limited; waiting before retrying.');
    b.call(
      'fetch_url',
      { url },
      rng.pick(['HTTP 429 Too Many Requests (Retry-After: 20)', 'Error: request timed out after 30000 ms', 'HTTP 503 Service Unavailable']),
      { error: true },
    );
  }
  b.model('');
  b.call('fetch_url', { url }, `# ${p.id}\n\n${p.text}`);
  b.model(topic.answer);
  b.outcome({ answered: true });
  b.note(`${fails} transient failures (429/503/timeout) of the same fetch, then success`);
  return b.build();
}
