import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { EMPTY_REPLIES, LANGUAGE_NAMES, LANGUAGES, RESEARCH_QUESTIONS, type Language } from '../multilingual.ts';
import { cycle, startTrajectory, type ScenarioContext } from '../scenario.ts';
import { startResearch, type Researcher } from './researcher.ts';

const NOT_FOUND = [
  "These results don't answer the question directly. Let me search again with different wording.",
  'Still not what I need. Let me rephrase the query.',
  'The documents are related but do not explain it. Searching again.',
  'Let me try another phrasing.',
  '',
  'Nothing new. I will search once more.',
];

function finish(r: Researcher, recovers: boolean, fixated: readonly number[]): void {
  const { b, rng, topic } = r;
  if (recovers && rng.chance(0.6)) {
    const ref = rng.sample(topic.refinements, 2);
    for (const x of ref) r.retrieve(x.query, x.hits, { say: 'Repeating the same search will not help. Let me look for a more specific aspect.' });
    b.model(topic.answer);
    b.outcome({ answered: true });
  } else if (recovers) {
    b.model(
      `I could not find a direct answer in the ${topic.collection} collection after several searches. The closest passages are ${topic.fixationHits.slice(0, 2).join(' and ')}. Could you tell me more about the setup?`,
    );
    b.outcome({ answered: false });
  } else {
    b.outcome({ answered: false, stop_reason: 'max_iterations' });
  }
  void fixated;
}

/** Near-duplicate retrieval queries whose results do not change. */
export function ragFixation(ctx: ScenarioContext): CorpusTrajectory {
  const recovers = ctx.index % 3 !== 2;
  const jitter = ctx.index % 4 === 1;
  const r = startResearch(ctx, { variant: `${jitter ? 'scores jitter, same documents' : 'identical results'}; ${recovers ? 'recovers' : 'runs to the end'}` });
  const { b, rng, topic } = r;
  // Some useful searching first, so the loop starts at different points.
  for (const x of rng.sample(topic.refinements, rng.pick([0, 0, 1, 2])))
    r.retrieve(x.query, x.hits, { say: rng.pick(['', 'Let me start with the specifics.']) });
  const repeats = rng.int(3, 8);
  const order = [topic.paraphrases[0] as string, ...rng.shuffle(topic.paraphrases.slice(1))];
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    indices.push(
      r.retrieve(cycle(order, k), topic.fixationHits, {
        say: k === 0 ? rng.pick(["I'll search the documentation.", 'Let me look this up in the docs.', '']) : cycle(NOT_FOUND, k + ctx.index),
        jitter,
      }),
    );
    if (k === 2) b.stuck('rag_fixation', indices[2] as number);
  }
  finish(r, recovers, indices);
  b.note(
    `${repeats} near-duplicate queries (steps ${indices.join(', ')}) all retrieving ${topic.fixationHits.join(', ')}${jitter ? ' (scores move slightly, documents do not)' : ''}${recovers ? '; then changes approach' : ''}`,
  );
  return b.build();
}

/** A retrieval in a non-Latin script repeated (near-)identically with the same passages. */
export function ragNonLatinLoop(ctx: ScenarioContext): CorpusTrajectory {
  const lang = cycle(LANGUAGES, ctx.index) as Language;
  const q = cycle(RESEARCH_QUESTIONS[lang], Math.floor(ctx.index / 5));
  const b = startTrajectory(ctx, { variant: `${LANGUAGE_NAMES[lang]} query`, task: q.question, tokens: 'counted', systemTokens: ctx.rng.int(1500, 3000) });
  const { rng } = b;
  b.user(q.question);
  const base = q.queries[0] as string;
  const spellings = [base, base, `${base} `, base.replace(' ', '　'), base];
  const results = q.passages.slice(0, 2).map((p, i) => `[${lang}-doc-${i + 1}] (score ${(0.84 - i * 0.06).toFixed(2)}) ${p}`);
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0 && rng.chance(0.3)) {
      b.model(cycle(['もう一度検索します。', '再检索一次。', '다시 검색하겠습니다.', 'Повторю поиск.', 'سأبحث مرة أخرى.'], LANGUAGES.indexOf(lang)));
      b.user(rng.pick(EMPTY_REPLIES[lang]));
    }
    b.model(
      k === 0
        ? ''
        : rng.pick([
            '',
            cycle(
              [
                '検索結果に答えがありません。もう一度調べます。',
                '结果中没有答案，再查一次。',
                '결과에 답이 없습니다. 다시 찾아보겠습니다.',
                'В результатах нет ответа, ищу ещё раз.',
                'لا توجد إجابة في النتائج، سأبحث مرة أخرى.',
              ],
              LANGUAGES.indexOf(lang),
            ),
          ]),
    );
    indices.push(b.retrieval(cycle(spellings, k), results));
    if (k === 2) b.stuck('rag_fixation', indices[2] as number);
  }
  b.model(q.passages.slice(0, 2).join(' '));
  b.outcome({ answered: rng.chance(0.5) });
  b.note(
    `the ${LANGUAGE_NAMES[lang]} query "${base}" sent ${repeats}x (identical or differing only by a space) with the same two passages (steps ${indices.join(', ')})`,
  );
  return b.build();
}

/** Web searches re-phrased again and again, the same results coming back. */
export function ragWebSpiral(ctx: ScenarioContext): CorpusTrajectory {
  const recovers = ctx.index % 2 === 0;
  const r = startResearch(ctx, { variant: `web_search paraphrases; ${recovers ? 'recovers' : 'runs to the end'}` });
  const { b, rng, topic } = r;
  const results = topic.fixationHits
    .map((id, i) => `${i + 1}. ${r.passage(id).text.slice(0, 90)}… — https://docs.example.com/${topic.collection}/${id}`)
    .join('\n');
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    b.model(k === 0 ? 'Let me search the web.' : cycle(NOT_FOUND, k));
    indices.push(
      b.call(
        'web_search',
        k % 3 === 2 ? { num_results: 5, query: cycle(topic.paraphrases, k) } : { query: cycle(topic.paraphrases, k), num_results: 5 },
        results,
      ),
    );
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  finish(r, recovers, indices);
  b.note(`web_search with paraphrased queries ${repeats}x (steps ${indices.join(', ')}), identical result list every time`);
  return b.build();
}

/** Prompt tokens grow ≥ 1.35× per call as ever larger pages or tables are pulled in without progress. */
export function ragTokenDrift(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['fetch-bigger', 'sql-dump'] as const, ctx.index);
  const recovers = ctx.index % 3 === 0;
  const r = startResearch(ctx, {
    variant: `${kind}; ${recovers ? 'compacts and answers' : 'runs out of context'}`,
    tokens: 'counted',
    systemTokens: ctx.rng.int(3000, 4000),
  });
  const { b, rng, topic } = r;
  for (const x of rng.sample(topic.refinements, 2)) r.retrieve(x.query, x.hits, { say: '' });
  // Ordinary reading of different pages first: the context is no longer small when the drift starts.
  for (const p of rng.sample(topic.passages, rng.int(3, 5))) {
    b.model(rng.pick(['', `Reading ${p.id}.`]));
    b.call('fetch_url', { url: `https://docs.example.com/${topic.collection}/${p.id}` }, `# ${p.id}\n\n${p.text}`, { fullChars: rng.int(2500, 5000) });
  }
  b.model('Let me look at the sources in full.');
  const start = b.length - 1;
  b.stuckOnDriftFrom(start);
  const rounds = rng.int(4, 7);
  const tools =
    kind === 'fetch-bigger'
      ? [
          'https://docs.example.com/{c}/overview',
          'https://docs.example.com/{c}/reference?all=1',
          'https://docs.example.com/{c}/print-all',
          'https://docs.example.com/{c}/llms-full.txt',
          'https://docs.example.com/{c}/archive/all-versions.txt',
          'https://docs.example.com/{c}/archive/all-versions.txt?include=changelog',
          'https://docs.example.com/{c}/export.json',
        ]
      : [
          "SELECT * FROM support_tickets WHERE topic ILIKE '%{c}%' LIMIT 200",
          "SELECT * FROM support_tickets WHERE topic ILIKE '%{c}%' LIMIT 1000",
          "SELECT * FROM support_tickets WHERE topic ILIKE '%{c}%'",
          'SELECT * FROM support_tickets',
          'SELECT t.*, m.* FROM support_tickets t JOIN ticket_messages m USING (ticket_id)',
          'SELECT * FROM ticket_messages',
          'SELECT * FROM ticket_events',
        ];
  for (let k = 0; k < rounds; k++) {
    const target = cycle(tools, Math.min(k, tools.length - 1)).replace('{c}', topic.collection);
    const head =
      kind === 'fetch-bigger'
        ? topic.passages.map((p) => `## ${p.id}\n${p.text}`).join('\n\n')
        : Array.from(
            { length: 25 },
            (_, i) =>
              `${1000 + i * 7 + k}\t${topic.collection}\t${rng.pick(['open', 'closed', 'pending'])}\t2024-0${rng.int(1, 6)}-${String(rng.int(10, 28))}\t${rng.pick(topic.paraphrases)}`,
          ).join('\n');
    const fullChars = Math.max(head.length, Math.round(b.contextTokens * rng.float(0.42, 0.8) * 4));
    if (k > 0)
      b.model(
        cycle(
          [
            'This still does not settle it. I need the complete material.',
            'Let me pull everything to be sure nothing is missed.',
            'The answer may be further down; loading more.',
            'Loading the rest as well.',
          ],
          k,
        ),
      );
    b.call(kind === 'fetch-bigger' ? 'fetch_url' : 'run_sql', kind === 'fetch-bigger' ? { url: target } : { query: target }, head, { fullChars });
  }
  if (recovers) {
    b.compact(`Summary: the question is "${topic.question}". Relevant passages: ${topic.fixationHits.join(', ')}. Bulk exports added nothing.`, {
      keepTokens: rng.int(800, 2500),
    });
    b.model(topic.answer);
    b.outcome({ answered: true });
  } else {
    b.model('');
    b.outcome({ answered: false, error: `context_length_exceeded: ${b.contextTokens} tokens` });
  }
  b.note(
    `from step ${start} each ${kind === 'fetch-bigger' ? 'fetch' : 'query'} pulls a larger dump into the context (prompt ≥1.35x per call) without new insight`,
  );
  return b.build();
}

/** The same answer paragraph given again and again while nothing new is searched. */
export function ragTextRepetition(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'repeated answer' });
  const { b, rng, topic } = r;
  r.retrieve(topic.paraphrases[0] as string, topic.fixationHits, { say: '' });
  const paragraph = `Based on the available documents, I could not find a definitive answer to your question. The documentation mentions ${r
    .passage(topic.fixationHits[0] as string)
    .text.split('.')[0]
    ?.toLowerCase()}, but it does not address your specific situation. I recommend checking your configuration and consulting the relevant documentation for more details.`;
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0) b.user(cycle(['Can you dig deeper?', 'That is not helpful, try harder.', 'Please look again.', 'Anything more specific?'], k + ctx.index));
    indices.push(b.model(rng.chance(0.25) ? paragraph.replace('I recommend', 'I would recommend') : paragraph));
    if (k === 2) b.stuck('other', indices[2] as number);
  }
  b.outcome({ answered: false });
  b.note(`the same "could not find a definitive answer" paragraph ${repeats}x (steps ${indices.join(', ')}) with no new search in between`);
  return b.build();
}

/** Near-duplicate retrievals continuing across user turns that add nothing. */
export function ragLoopAcrossTurns(ctx: ScenarioContext): CorpusTrajectory {
  const r = startResearch(ctx, { variant: 'user says ok between searches' });
  const { b, rng, topic } = r;
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0) {
      b.model(
        cycle(
          ['I have not found it yet. Shall I keep searching?', 'Still looking. Continue?', 'Nothing conclusive yet; I will keep searching if you want.'],
          k,
        ),
      );
      b.user(rng.pick(EMPTY_REPLIES.en));
    }
    indices.push(r.retrieve(cycle(topic.paraphrases, k), topic.fixationHits, { say: '' }));
    if (k === 2) b.stuck('rag_fixation', indices[2] as number);
  }
  b.model(`I could not find more than: ${r.passage(topic.fixationHits[0] as string).text}`);
  b.outcome({ answered: false });
  b.note(`${repeats} near-duplicate retrievals (steps ${indices.join(', ')}) with the same passages; the user turns between ("ok", "go on") add nothing`);
  return b.build();
}
