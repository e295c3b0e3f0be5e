import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AgentBreaker } from '../index.ts';
import { BreakerDriver } from '../test-support/breaker-driver.ts';

describe('delegation loop', () => {
  test('a sub-agent re-asked the same task a third time trips, before it runs', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
    const out = [];
    for (let i = 0; i < 3; i++) {
      out.push(
        await d.tool(
          'researcher',
          { task: `find the 2024 revenue of ACME corp ${i === 2 ? 'again' : ''}`.trim() },
          `Answer ${i}: sources disagree on ${2000 + i} figures.`,
        ),
      );
    }
    assert.deepEqual(
      out.map((x) => x.decision.action),
      ['allow', 'allow', 'steer'],
    );
    assert.equal(out[2]!.check.category, 'delegation_loop');
    assert.equal(out[2]!.check.evidence?.pattern, 'reask');
  });

  test('a re-ask answered the same is caught on the second answer', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const answer = 'I could not find the 2024 revenue of ACME corp in the available filings.';
    const first = await d.delegation('researcher', 'find the 2024 revenue of ACME corp', answer);
    const second = await d.delegation('researcher', 'find the 2024 revenue of ACME corp, look harder', `${answer} Sorry.`);
    assert.equal(first.action, 'allow');
    assert.equal(second.action, 'steer');
    assert.equal(second.evidence?.pattern, 'same_answer');
    assert.match(second.message ?? '', /same answer/);
  });

  test('different tasks to one sub-agent are not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const topics = ['revenue of ACME', 'headcount of Globex', 'CEO of Initech', 'founding year of Umbrella', 'HQ city of Hooli'];
    const out = [];
    for (const t of topics) out.push(await d.delegation('researcher', `find the ${t}`, `The ${t} is listed in the report.`));
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('maxCalls per agent', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { perAgent: { coder: { maxCalls: 5 } } } }));
    const out = [];
    for (let i = 0; i < 5; i++)
      out.push(
        await d.delegation(
          'coder',
          'fix the failing test in parser.py',
          [
            'Renamed the helper and reran the suite.',
            'Added a timezone branch; two tests still fail.',
            'Reverted the branch, patched the regex instead.',
            'Parser now strips whitespace before matching dates.',
            'Made the date format configurable, tests pending.',
          ][i]!,
        ),
      );
    assert.deepEqual(
      out.map((x) => x.action),
      ['allow', 'allow', 'allow', 'allow', 'steer'],
    );
  });

  test('one worker given different files, even with the same short verdict, is not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const file of ['src/cart.ts', 'src/user.ts', 'src/orders/list.ts', 'src/orders/detail.ts', 'lib/money.ts']) {
      out.push(await d.delegation('reviewer', `Review ${file} for bugs and security issues.`, `Review of ${file}: no issues found in this file.`));
    }
    assert.ok(
      out.every((x) => x.action === 'allow'),
      out.map((x) => x.evidence?.detail).join(' | '),
    );
  });

  test('numbered parts of one text are different tasks', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['translator'] } }));
    const out = [];
    for (let part = 1; part <= 5; part++) {
      out.push(await d.tool('translator', { task: `Translate part ${part}/5 into French: "Step ${part} of the setup."` }, `Étape ${part} de l'installation.`));
    }
    assert.ok(out.every((x) => x.decision.action === 'allow'));
  });

  test('look-alike requests about different items are not re-asks when every answer is new', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (const [name, answer] of [
      ['Initech', 'Initech: head office in Austin, 1,200 staff, logistics software.'],
      ['Globex Corporation', 'Globex Corporation: based in Cypress Creek, energy and robotics.'],
      ['Umbrella Health', 'Umbrella Health: Raccoon City clinics, private, no staff figures.'],
      ['Hooli', 'Hooli: Palo Alto search and cloud company, listed on NASDAQ.'],
    ] as const) {
      out.push(await d.delegation('researcher', `Find the head office, sector and staff count of ${name}.`, answer));
    }
    assert.ok(
      out.every((x) => x.action === 'allow'),
      out.map((x) => x.evidence?.detail).join(' | '),
    );
  });

  test('a reworded re-ask answered the same is caught, and a third ask is blocked before it runs', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
    const answer = 'No filing or press release gives the 2023 staff count of Initech; it is privately held.';
    const out = [
      await d.tool('researcher', { task: 'Find the 2023 staff count of Initech.' }, answer),
      await d.tool('researcher', { task: 'Search again for the staff count of Initech in 2023.' }, answer),
      await d.tool('researcher', { task: 'Initech staff count for 2023: check every source once more.' }, answer),
    ];
    assert.deepEqual(
      out.map((x) => x.decision.action),
      ['allow', 'steer', 'block'],
    );
    assert.equal(out[1]!.decision.evidence?.pattern, 'same_answer');
    assert.equal(out[2]!.decision.evidence?.pattern, 'reask');
  });

  test('a JSON-text task and the same task as an object are the same task', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['planner'] } }));
    const out = [
      await d.tool('planner', '{"task": "Plan the database migration", "priority": 2}', 'Plan A: dual writes, then cut over.'),
      await d.tool('planner', { priority: 2, task: 'Plan the database migration' }, 'Plan B: replicate, then switch reads.'),
      await d.tool('planner', { task: 'Plan the database migration', priority: 2 }, 'Plan C: freeze writes for an hour.'),
    ];
    assert.deepEqual(
      out.map((x) => x.decision.action),
      ['allow', 'allow', 'steer'],
    );
  });

  test('retries after transient failures are an outage, not a loop', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['summariser'] } }));
    const task = { task: 'Summarise the three latest incidents.' };
    const out = [
      await d.tool('summariser', task, 'Error: 429 Too Many Requests, retry after 20 s'),
      await d.tool('summariser', task, 'Error: 429 Too Many Requests, retry after 20 s'),
      await d.tool('summariser', task, 'Error: 503 Service Unavailable'),
      await d.tool('summariser', task, 'INC-41 checkout latency; INC-40 login outage; INC-38 slow search.'),
    ];
    assert.ok(
      out.every((x) => x.decision.action === 'allow'),
      out.map((x) => x.decision.evidence?.detail).join(' | '),
    );
  });

  test('a user turn restarts the count', async () => {
    const d = new BreakerDriver(new AgentBreaker());
    const out = [];
    for (let i = 0; i < 4; i++) {
      out.push(await d.delegation('researcher', 'summarise the latest news on ACME', `News item ${i} of the day about a new product line ${i}.`));
      await d.user('Thanks, and now?');
    }
    assert.ok(out.every((x) => x.action === 'allow'));
  });

  test('a loop that reuses one task object and changes what it asks is judged by what it asks now', async () => {
    const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
    const args = { task: '' };
    const out = [];
    for (const file of ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts', 'src/e.ts']) {
      args.task = `Summarise ${file}`;
      out.push(await d.tool('researcher', args, `Summary: ${file} exports one function and has no side effects.`));
    }
    assert.deepEqual(
      out.map((x) => x.decision.action),
      ['allow', 'allow', 'allow', 'allow', 'allow'],
    );
  });

  describe('items named by a proper name', () => {
    /** A research sub-agent's structured answer: the same template for every company. */
    const card = (company: string, ceo: string, since: number) =>
      `Company: ${company}\nCEO: ${ceo} (since ${since})\nSource: the company's latest annual report and investor relations page.\nConfidence: high`;
    const companies = [
      ['Acme Corp', 'Jane Doe', 2019],
      ['Globex', 'Hank Scorpio', 2015],
      ['Initech', 'Bill Lumbergh', 2021],
      ['Umbrella', 'Albert Wesker', 2012],
      ['Hooli', 'Gavin Belson', 2010],
    ] as const;
    const details = (out: readonly { action: string; evidence?: { detail?: string } }[]) => out.map((x) => x.evidence?.detail ?? x.action).join(' | ');

    test('one worker asked the same question about several companies, answering in a template, is not a loop', async () => {
      const d = new BreakerDriver(new AgentBreaker());
      const out = [];
      for (const [company, ceo, since] of companies) out.push(await d.delegation('researcher', `Find the CEO of ${company}`, card(company, ceo, since)));
      assert.ok(
        out.every((x) => x.action === 'allow'),
        details(out),
      );
    });

    test('the same sweep through a sub-agent tool is never blocked before it runs', async () => {
      const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
      const out = [];
      for (const [company, ceo, since] of companies) out.push(await d.tool('researcher', { task: `Find the CEO of ${company}` }, card(company, ceo, since)));
      assert.ok(
        out.every((x) => x.decision.action === 'allow'),
        details(out.map((x) => x.decision)),
      );
    });

    test('the company as a field of its own, a one-word name alone on its line, is what tells the tasks apart', async () => {
      const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
      const out = [];
      for (const [company, ceo, since] of companies) {
        out.push(await d.tool('researcher', { company, question: 'Who is the CEO, and since when?' }, card(company, ceo, since)));
      }
      assert.ok(
        out.every((x) => x.decision.action === 'allow'),
        details(out.map((x) => x.decision)),
      );
    });

    test('several people, or several components named in the task, are several items', async () => {
      const d = new BreakerDriver(new AgentBreaker());
      const out = [];
      for (const person of ['Grace Hopper', 'Alan Turing', 'Ada Lovelace', 'Edsger Dijkstra']) {
        out.push(
          await d.delegation(
            'biographer',
            `Write a two-line summary of the career of ${person}.`,
            `Summary for ${person}: a pioneer of computing whose work is still taught in every computer science course today.`,
          ),
        );
      }
      for (const component of ['CheckoutForm', 'CartDrawer', 'ProfilePage', 'SearchBar']) {
        out.push(
          await d.delegation(
            'reviewer',
            `Review the ${component} React component for accessibility problems.`,
            `Accessibility review of the ${component} component: no problems found; labels, roles and focus order are correct.`,
          ),
        );
      }
      assert.ok(
        out.every((x) => x.action === 'allow'),
        details(out),
      );
    });

    test('one company re-asked in other words (Corp or Corporation, another source named too) is still a loop', async () => {
      const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
      const answer = card('Acme Corp', 'Jane Doe', 2019);
      const out = [
        await d.tool('researcher', { task: 'Find the CEO of Acme Corp.' }, answer),
        await d.tool('researcher', { task: 'Search again for the CEO of Acme Corporation; check LinkedIn too.' }, answer),
        await d.tool('researcher', { task: 'Find the CEO of ACME again.' }, answer),
      ];
      assert.deepEqual(
        out.map((x) => x.decision.action),
        ['allow', 'steer', 'block'],
        details(out.map((x) => x.decision)),
      );
      assert.equal(out[1]!.decision.evidence?.pattern, 'same_answer');
      assert.equal(out[2]!.decision.evidence?.pattern, 'reask');
    });

    test('the same companies asked over and over in a cycle are a loop', async () => {
      const d = new BreakerDriver(new AgentBreaker({ delegation: { subAgentTools: ['researcher'] } }));
      const out = [];
      for (let round = 0; round < 3; round++) {
        for (const [company, ceo, since] of companies.slice(0, 2)) {
          out.push(await d.tool('researcher', { task: `Find the CEO of ${company}` }, card(company, ceo, since)));
        }
      }
      // Acme Corp and Globex asked a second time, each answered as the first time.
      assert.deepEqual(
        out.slice(0, 2).map((x) => x.decision.action),
        ['allow', 'allow'],
      );
      assert.equal(out[2]!.decision.category, 'delegation_loop', details(out.map((x) => x.decision)));
      assert.equal(out[2]!.decision.evidence?.pattern, 'same_answer');
      assert.ok(out.slice(4).every((x) => x.decision.action === 'block' || x.decision.action === 'stop'));
    });
  });
});
