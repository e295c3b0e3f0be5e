import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

const docs = ['doc-7: refund policy overview', 'doc-9: shipping times'];

describe('RAG fixation', () => {
  test('three near-identical queries returning the same documents trip', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('refund policy for damaged items', docs),
      await d.retrieval('refund policy for damaged items please', docs),
      await d.retrieval('refund policy for damaged items', docs),
    ];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(out[2]!.category, 'rag_fixation');
    assert.match(out[2]!.message ?? '', /searches/);
  });

  test('near-identical queries whose results change are exploring, not fixated', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 5; i++) out.push(await d.retrieval('refund policy for damaged items', [`doc-${i}`, `doc-${i + 10}`]));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('the same search for the same documents, with only failed searches in between, trips: the failures brought nothing new', async () => {
    // A ReAct agent alternating between a search that works and a lookup that fails, round and round.
    const protocols = ['The Rome Protocols were three agreements signed in Rome on 17 March 1934.'];
    const notFound = ['Could not find that page, please try again.'];
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('Rome Protocols', protocols),
      await d.retrieval('Engelbert Dollfuss death', notFound),
      await d.retrieval('Rome Protocols', protocols),
      await d.retrieval('Engelbert Dollfuss biography', notFound),
      await d.retrieval('Rome Protocols', protocols),
    ];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'allow', 'steer'],
    );
    assert.equal(out[4]!.category, 'rag_fixation');
  });

  test('the same search again after a search that found something else is exploring, not fixated', async () => {
    const protocols = ['The Rome Protocols were three agreements signed in Rome on 17 March 1934.'];
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 3; i++) {
      out.push(await d.retrieval('Rome Protocols', protocols));
      out.push(await d.retrieval(`Prime Minister ${i} of Austria`, [`Page ${i}: a different chancellor.`]));
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('different queries are not fixation', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [await d.retrieval('refund policy', docs), await d.retrieval('shipping to canada', docs), await d.retrieval('warranty on laptops', docs)];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('a user turn between queries restarts the evidence', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) {
      out.push(await d.retrieval('refund policy for damaged items', docs));
      await d.user('And what about this one?');
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('reworded queries that retrieve the very same passages trip, whatever their order and scores', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('invoice disputes escalation owner', [
        '[fin-3] (score 0.91) Disputes go to the billing lead.',
        '[fin-8] (score 0.72) Credits need approval.',
      ]),
      await d.retrieval('who owns escalation of an invoice dispute', [
        '[fin-8] (score 0.70) Credits need approval.',
        '[fin-3] (score 0.88) Disputes go to the billing lead.',
      ]),
      await d.retrieval('escalating disputed invoices: who is responsible', [
        '[fin-3] (score 0.90) Disputes go to the billing lead.',
        '[fin-8] (score 0.74) Credits need approval.',
      ]),
    ];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(out[2]!.evidence?.pattern, 'same_documents');
  });

  test('sameDocumentsSimilarity sets how related queries with the same passages must be', async () => {
    const d = new BreakerDriver(new AgentBreaker({ ragFixation: { sameDocumentsSimilarity: 0.95 } }));
    const out = [
      await d.retrieval('invoice disputes escalation owner', docs),
      await d.retrieval('who owns escalation of an invoice dispute', docs),
      await d.retrieval('escalating disputed invoices: who is responsible', docs),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('related queries whose retrieved passages change are a refined search, not fixation', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const [query, passage] of [
      ['invoice dispute escalation', 'Disputes go to the billing lead.'],
      ['invoice dispute escalation deadline', 'Disputes must be raised within 30 days.'],
      ['invoice dispute escalation for enterprise plans', 'Enterprise disputes go to the account manager.'],
      ['invoice dispute escalation template', 'Use form F-12 for disputes.'],
    ] as const) {
      out.push(await d.retrieval(query, [passage]));
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('queries naming different things are different searches, even with the same passages', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const year of [2021, 2022, 2023, 2024]) out.push(await d.retrieval(`annual report net income ${year}`, docs));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('queries naming different companies or people are different searches, failed or with the same passages', async () => {
    const out = [];
    const companies = ['Acme', 'Globex', 'Initech', 'Umbrella'];
    const failed = new BreakerDriver(new AgentBreaker());
    for (const c of companies) out.push(await failed.retrieval(`${c} annual revenue`, [`Could not find [${c} annual revenue]. Similar: ['Annual report']`]));
    const same = new BreakerDriver(new AgentBreaker());
    for (const c of companies) out.push(await same.retrieval(`${c} annual revenue`, docs));
    const asked = new BreakerDriver(new AgentBreaker());
    for (const c of companies) out.push(await asked.retrieval(`What was ${c}'s revenue last year?`, [`No results for "${c} revenue"`]));
    assert.ok(
      out.every((x) => x.action === 'allow'),
      out.map((x) => x.action).join(),
    );
  });

  test('a search reworded in sentence case is one search: a first word is capitalised because it comes first', async () => {
    const same = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const query of ['Password reset steps', 'Reset password instructions', 'Steps to reset a password', 'Instructions for resetting passwords']) {
      out.push(await same.retrieval(query, docs));
    }
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer', 'stop'],
    );
  });

  test('queries that keep one name, whatever they add to it, are one search', async () => {
    const failed = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const query of ['famous bhavageete by Arun Date', 'famous bhavageete by Arun Date in India', 'famous Marathi bhavageete by Arun Date']) {
      out.push(await failed.retrieval(query, [`Could not find [${query}]. Similar: ['Indian folk music']`]));
    }
    assert.equal(out.at(-1)!.action, 'steer');
    const same = new BreakerDriver(new AgentBreaker());
    const spelled = [];
    for (const query of ['SAS selection course requirements', 'Special Air Service selection course requirements', 'SAS selection course entry requirements'])
      spelled.push(await same.retrieval(query, docs));
    assert.equal(spelled.at(-1)!.action, 'steer', 'an acronym and the name it stands for are one name');
  });

  test('without results, only near-identical queries count: rewordings alone are not evidence', async () => {
    const near = new BreakerDriver(new AgentBreaker());
    const nearOut = [
      await near.retrieval('refund policy for damaged items'),
      await near.retrieval('refund policy for damaged item'),
      await near.retrieval('Refund policy, damaged items'),
    ];
    assert.deepEqual(
      nearOut.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(nearOut[2]!.evidence?.pattern, 'near_identical_queries');

    const reworded = new BreakerDriver(new AgentBreaker());
    const rewordedOut = [
      await reworded.retrieval('invoice disputes escalation owner'),
      await reworded.retrieval('who owns escalation of an invoice dispute'),
      await reworded.retrieval('escalating disputed invoices: who is responsible'),
    ];
    assert.ok(rewordedOut.every((x) => x.action === 'allow'));
  });

  test('retrieving nothing is no evidence that reworded queries are the same search', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('invoice disputes escalation owner', []),
      await d.retrieval('who owns escalation of an invoice dispute', []),
      await d.retrieval('escalating disputed invoices: who is responsible', []),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('a bare acknowledgement between searches does not restart the evidence', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const query of [
      'invoice disputes escalation owner',
      'who owns escalation of an invoice dispute',
      'escalating disputed invoices: who is responsible',
    ]) {
      out.push(await d.retrieval(query, docs));
      await d.user('ok');
    }
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
  });

  test('reworded searches that each report finding nothing trip, though every answer is worded differently', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const [query, similar] of [
      ['Orbit Records AG', "'Orbit (band)', 'Record label', 'Orbital Records'"],
      ['Orbit Records', "'Orbital (band)', 'Orbit Books'"],
      ['Orbit Records name change', "'Name change', 'Orbit Books', 'Renaming'"],
    ] as const) {
      out.push(await d.retrieval(query, [`Could not find [${query}]. Similar: [${similar}]`]));
    }
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(out[2]!.evidence?.pattern, 'failed_searches');
    // The model is told what happened: nothing was found, not that the same documents came back.
    assert.match(out[2]!.message ?? '', /each found nothing/);
    assert.doesNotMatch(out[2]!.message ?? '', /same documents/);
  });

  test('searching for the alternatives a failed search suggested is following it, not fixation', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('The lantern', ["Could not find [The lantern]. Similar: ['Lantern', 'Lantern (disambiguation)', 'Green Lantern']"]),
      await d.retrieval('Lantern (disambiguation)', [
        "Could not find [Lantern (disambiguation)]. Similar: ['Paper lantern', 'Sky lantern', 'Lantern festival']",
      ]),
      await d.retrieval('Paper lantern', ["Could not find [Paper lantern]. Similar: ['Paper lantern', 'Lantern festival', 'Chinese paper lantern']"]),
      await d.retrieval('Lantern festival', ['The Lantern Festival is held on the fifteenth day of the first month.']),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('failed searches for different targets that share a word are not one search', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const query of ['Tamil songs', 'Tamil poems', 'Tamil poems anthology']) {
      out.push(await d.retrieval(query, [`Could not find [${query}]. Similar: ['Kural', 'Sangam literature']`]));
    }
    const people = new BreakerDriver(new AgentBreaker());
    for (const query of ['Anna Lee Varga filmography', 'Beth Ann Varga filmography', 'Anna Lee and Beth Ann Varga film']) {
      out.push(await people.retrieval(query, [`Could not find [${query}]. The search returned a different page.`]));
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('an empty result list is not a reported failure: reworded queries still need to be near-identical', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const query of ['Orbit Records AG', 'Orbit Records', 'Orbit Records name change']) out.push(await d.retrieval(query, []));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('failed searches for one target trip though failed searches for other targets come between', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const fail = (query: string) => d.retrieval(query, [`Could not find [${query}]. Similar: ['Glass Bead Game', 'Hermann Hesse']`]);
    const out = [
      await fail('"The Glass Bead Game novel"'),
      await fail('"The Glass Bead Game"'),
      await fail('"Hermann Hesse"'),
      await fail('"Castalia"'),
      await fail('"The Glass Bead Game"'),
    ];
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'allow', 'steer'],
    );
  });

  test('a search that found something ends a chain of failed searches', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [
      await d.retrieval('Glass Bead Game author', ["Could not find [Glass Bead Game author]. Similar: ['Hermann Hesse']"]),
      await d.retrieval('Glass Bead Game', ['The Glass Bead Game is the last full-length novel of Hermann Hesse.']),
      await d.retrieval('Glass Bead Game prize', ["Could not find [Glass Bead Game prize]. Similar: ['Nobel Prize']"]),
      await d.retrieval('Glass Bead Game award', ["Could not find [Glass Bead Game award]. Similar: ['Nobel Prize']"]),
    ];
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('a failed search that adds a year narrows the same search; two different years are other targets', async () => {
    const narrowed = new BreakerDriver(new AgentBreaker());
    const fail = (d: BreakerDriver, query: string) => d.retrieval(query, [`Could not find [${query}]. Similar: []`]);
    const out = [
      await fail(narrowed, 'Harbour Bridge opening ceremony'),
      await fail(narrowed, 'Harbour Bridge opening ceremony guests'),
      await fail(narrowed, 'Harbour Bridge opening ceremony guests 1932'),
    ];
    assert.equal(out[2]!.action, 'steer');
    const years = new BreakerDriver(new AgentBreaker());
    const yearsOut = [];
    for (const year of [1930, 1931, 1932]) yearsOut.push(await fail(years, `Harbour Bridge construction progress ${year}`));
    assert.ok(yearsOut.every((x) => x.action === 'allow'));
  });

  test('a sweep over the names failed searches offered, each searched at most twice, is following them, not fixation', async () => {
    // Modelled on real runs: quoted searches that all fail, each taking up a name the search offered.
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const [query, similar] of [
      ['"Bix"', "'Bixby', 'Bix Beiderbecke', 'Bix Dawson', 'Bix (film)'"],
      ['"Bix Beiderbecke"', "'Bix Beiderbecke', 'Bix: Ain\u2019t None of Them Play Like Him Yet', 'Wolverine Orchestra'"],
      ['"Bix Beiderbecke" and find the band he led in 1927', "'1927 in jazz'"],
      ['"Bix Dawson" and find the band he led in 1927', ''],
      ['"Bix Dawson"', "'Bix Dawson', 'Dawson (surname)'"],
    ] as const) {
      out.push(await d.retrieval(query, [`Could not find [${query}]. Similar: [${similar}]`]));
    }
    assert.deepEqual(new Set(out.map((x) => x.action)), new Set(['allow']));
  });

  test('a name respelled, spelled out from its acronym or cut to its last names is still the same target', async () => {
    const acronym = new BreakerDriver(new AgentBreaker());
    const out = [
      await acronym.retrieval('SAS', ["Could not find [SAS]. Similar: ['SAS', 'Special Air Service', 'Scandinavian Airlines']"]),
      await acronym.retrieval('when was the SAS founded', [
        'Could not find [when was the SAS founded]. The search returned a different page ("Scandinavian Airlines").',
      ]),
      await acronym.retrieval('when was the Special Air Service founded', [
        'Could not find [when was the Special Air Service founded]. The search returned a different page ("Special Air Service").',
      ]),
    ];
    assert.equal(out[2]!.action, 'steer');
    const shortened = new BreakerDriver(new AgentBreaker());
    const fail = (query: string, similar: string) => shortened.retrieval(query, [`Could not find [${query}]. Similar: [${similar}]`]);
    const again = [
      await fail('Mary Jane Holloway', "'Jane Holloway', 'Holloway (surname)', 'The Holloway Sisters'"),
      await fail('Mary Jane Holloway] and Search[Ruth Anne Holloway', ''),
      await fail('Jane Holloway] and Search[Ruth Holloway', ''),
    ];
    assert.equal(again[2]!.action, 'steer');
    const respelled = new BreakerDriver(new AgentBreaker());
    const third = [
      await respelled.retrieval('Chicago Cubbs in 1998', ["Could not find [Chicago Cubbs in 1998]. Similar: ['Chicago Cubs', '1998 Chicago Cubs season']"]),
      await respelled.retrieval('Chicago Cubs in 1998', ["Could not find [Chicago Cubs in 1998]. Similar: ['1998 Chicago Cubs season']"]),
      await respelled.retrieval('Chicago Cubs rookie in 1998', ["Could not find [Chicago Cubs rookie in 1998]. Similar: ['Kerry Wood']"]),
    ];
    assert.equal(third[2]!.action, 'steer');
  });

  test('escalates to a stop when it goes on', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) out.push(await d.retrieval('refund policy for damaged items', docs));
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'steer', 'stop'],
    );
  });
});
