import type { HandCase } from './hand-case.ts';

/**
 * Hand-written productive runs that look like loops on the surface. None is
 * labelled stuck: each note says what changes between the repetitions.
 */

const order = (id: string, status: string, item: string): string =>
  `{"order_id": "${id}", "status": "${status}", "items": [{"name": "${item}", "price": 49.99}]}`;

export const PRODUCTIVE_CASES: readonly HandCase[] = [
  {
    slug: 'twice-then-change',
    family: 'near-miss',
    variant: 'same failing call twice, third differs',
    task: 'Book table for 4 at Nopa tonight at 19:30.',
    note: 'book_table fails twice identically (steps 2, 4), the third call changes the time after the user agrees, and succeeds; only two occurrences',
    steps: (h) => {
      h.user('Book a table for 4 at Nopa tonight, 19:30.');
      const args = { restaurant: 'Nopa', party_size: 4, date: '2024-06-14', time: '19:30' };
      h.model().call('book_table', args, '{"error": "no_availability", "alternatives": ["18:45", "21:15"]}', { error: true });
      h.model('').call('book_table', args, '{"error": "no_availability", "alternatives": ["18:45", "21:15"]}', { error: true });
      h.model('19:30 is full. 18:45 or 21:15 are available. Which one?');
      h.user('21:15 then.');
      h.model().call('book_table', { ...args, time: '21:15' }, '{"confirmation": "NOPA-88412", "time": "21:15"}');
      h.model('Booked: 4 people at 21:15, confirmation NOPA-88412.');
    },
  },
  {
    slug: 'same-call-new-user-info',
    family: 'recheck-after-user',
    variant: 'three identical calls, each after the user changed something',
    task: 'Why does my payment keep failing?',
    note: 'charge_saved_card with identical arguments 3x; before the 2nd and 3rd the user reports a change (card unlocked, limit raised), so each retry could succeed; the third does',
    steps: (h) => {
      h.user('My subscription renewal failed, can you charge my saved card again?');
      const args = { customer_id: 'cus_44Lm', amount: 119.0, currency: 'EUR' };
      h.model().call('charge_saved_card', args, '{"status": "declined", "decline_code": "card_locked"}', { error: true });
      h.model('Your bank declined the charge: the card is locked. Please unlock it in your banking app.');
      h.user('Done, I unlocked it.');
      h.model().call('charge_saved_card', args, '{"status": "declined", "decline_code": "insufficient_limit"}', { error: true });
      h.model('Now it is declined for the card limit. Can you raise the limit or use another card?');
      h.user('I raised the limit to 500, try again.');
      h.model().call('charge_saved_card', args, '{"status": "succeeded", "charge_id": "ch_3PqL"}');
      h.model('The renewal of EUR 119.00 succeeded.');
    },
  },
  {
    slug: 'three-503-then-success',
    family: 'bounded-retry',
    variant: '503 twice, success on the third try',
    tokens: 'null',
    task: 'Return the keyboard from order #W4410987.',
    note: 'get_order_details fails with 503 twice (transient), third attempt succeeds; bounded retry',
    steps: (h) => {
      h.user('I want to return the keyboard from order #W4410987.');
      h.model('Let me retrieve the order.').call('get_order_details', { order_id: '#W4410987' }, 'Error: 503 Service Unavailable', { error: true });
      h.model("I'm sorry, there was a temporary issue. Let me try again.").call(
        'get_order_details',
        { order_id: '#W4410987' },
        'Error: 503 Service Unavailable',
        { error: true },
      );
      h.model('Let me try one more time.').call('get_order_details', { order_id: '#W4410987' }, order('#W4410987', 'delivered', 'Mechanical Keyboard'));
      h.model('The order was delivered; I can start a return of the keyboard to your original payment method. Proceed?');
    },
  },
  {
    slug: 'retry-after-429',
    family: 'bounded-retry',
    variant: '429 with Retry-After, a wait, then success',
    task: 'List the open pull requests of the infra repo.',
    note: 'gh api rate-limited once (429), the agent waits as told and the same call succeeds',
    steps: (h) => {
      h.user('Which PRs are open in acme/infra?');
      h.model().call('bash', { command: 'gh api repos/acme/infra/pulls?state=open' }, 'gh: API rate limit exceeded (HTTP 429)\nRetry-After: 30', {
        error: true,
      });
      h.model('Rate limited; waiting 30 seconds.').call('bash', { command: 'sleep 30' }, '');
      h.model().call(
        'bash',
        { command: 'gh api repos/acme/infra/pulls?state=open' },
        '[{"number": 812, "title": "Bump terraform-aws-eks to 20.8"}, {"number": 809, "title": "Add WAF rule for /admin"}]',
      );
      h.model('Two open PRs: #812 (EKS module bump) and #809 (WAF rule for /admin).');
    },
  },
  {
    slug: 'scroll-down-six-times',
    family: 'chunked-read',
    variant: 'SWE-agent scroll_down with identical empty arguments',
    tokens: 'null',
    task: 'Find where the retry delay is computed in client.py.',
    note: 'scroll_down called 5x with identical (empty) arguments; each call shows the next 100 lines',
    steps: (h) => {
      h.model("Let's open the client.").call(
        'open',
        'src/client.py',
        '[File: /repo/src/client.py (612 lines total)]\n1:import time\n2:import random\n...\n100:class Client:\n(512 more lines below)',
      );
      for (let i = 1; i <= 5; i++) {
        const top = i * 100 + 1;
        h.model(i === 1 ? "Let's scroll down to find the retry logic." : 'Scrolling further.').call(
          'scroll_down',
          '',
          `[File: /repo/src/client.py (612 lines total)]\n(${top - 1} more lines above)\n${top}:    def ${['get', 'post', '_request', '_send', '_backoff'][i - 1]}(self, *args, **kwargs):\n${top + 1}:        ...\n(${Math.max(0, 612 - top - 99)} more lines below)`,
        );
      }
      h.model('Found it: `_backoff` at line 501 computes the delay.');
    },
  },
  {
    slug: 'next-page-new-rows',
    family: 'pagination',
    variant: 'identical next_page calls, new rows each time',
    task: 'Count the users who signed up in May.',
    note: 'next_page {} called 4x; every page returns new users, the last says has_more false; the agent stops there',
    steps: (h) => {
      h.user('How many users signed up in May?');
      h.model().call(
        'list_users',
        { created_after: '2024-05-01', created_before: '2024-06-01', limit: 100 },
        '{"count": 100, "first_id": "u_1001", "last_id": "u_1100", "has_more": true}',
      );
      h.model().call('next_page', {}, '{"count": 100, "first_id": "u_1101", "last_id": "u_1200", "has_more": true}');
      h.model().call('next_page', {}, '{"count": 100, "first_id": "u_1201", "last_id": "u_1300", "has_more": true}');
      h.model().call('next_page', {}, '{"count": 100, "first_id": "u_1301", "last_id": "u_1400", "has_more": true}');
      h.model().call('next_page', {}, '{"count": 37, "first_id": "u_1401", "last_id": "u_1437", "has_more": false}');
      h.model('437 users signed up in May.');
    },
  },
  {
    slug: 'pytest-four-runs-with-edits',
    family: 'edit-test-cycle',
    variant: 'identical test command, different edits, failures 4 → 2 → 1 → 0',
    task: 'Make tests/test_dates.py pass.',
    note: 'pytest tests/test_dates.py run 4x with identical arguments; an edit precedes every re-run and the failure count moves 4 → 2 → 1 → 0',
    steps: (h) => {
      h.user('tests/test_dates.py is failing after the timezone refactor. Fix it.');
      h.model().call('bash', { command: 'pytest -q tests/test_dates.py' }, 'FFFF....\n4 failed, 4 passed in 0.41s', { error: true });
      h.model().call(
        'edit_file',
        { path: 'app/dates.py', old_str: 'return dt.replace(tzinfo=None)', new_str: 'return dt.astimezone(timezone.utc)' },
        'Applied 1 replacement in app/dates.py.',
      );
      h.model().call('bash', { command: 'pytest -q tests/test_dates.py' }, '..FF....\n2 failed, 6 passed in 0.39s', { error: true });
      h.model().call(
        'edit_file',
        { path: 'app/dates.py', old_str: 'fmt = "%Y-%m-%d %H:%M"', new_str: 'fmt = "%Y-%m-%dT%H:%M:%S%z"' },
        'Applied 1 replacement in app/dates.py.',
      );
      h.model().call('bash', { command: 'pytest -q tests/test_dates.py' }, '...F....\n1 failed, 7 passed in 0.40s', { error: true });
      h.model().call(
        'edit_file',
        { path: 'tests/test_dates.py', old_str: 'assert s == "2024-05-01 10:00"', new_str: 'assert s == "2024-05-01T10:00:00+0000"' },
        'Applied 1 replacement in tests/test_dates.py.',
      );
      h.model().call('bash', { command: 'pytest -q tests/test_dates.py' }, '........\n8 passed in 0.38s');
      h.model('All 8 date tests pass.');
    },
  },
  {
    slug: 'orders-eight-ids',
    family: 'id-sweep',
    variant: 'same tool over eight order ids',
    task: 'Which of my orders are still pending?',
    note: 'get_order_details over 8 different order ids; every call is new',
    steps: (h) => {
      h.user('Which of my orders are still pending? My email is ana.lopez1187@example.com.');
      h.model().call('find_user_id_by_email', { email: 'ana.lopez1187@example.com' }, 'ana_lopez_1187');
      const ids = ['#W2611340', '#W4817420', '#W5061109', '#W6779827', '#W7303089', '#W8331214', '#W9050131', '#W9932216'];
      const items = ['Desk Lamp', 'Backpack', 'Tablet', 'Water Bottle', 'Running Shoes', 'Electric Kettle', 'Gaming Mouse', 'Action Camera'];
      ids.forEach((id, i) => {
        h.model(i === 0 ? 'Let me check each order.' : '').call(
          'get_order_details',
          { order_id: id },
          order(id, i % 3 === 0 ? 'pending' : 'delivered', items[i] as string),
        );
      });
      h.model('Pending: #W2611340 (Desk Lamp), #W6779827 (Water Bottle), #W9050131 (Gaming Mouse). The others are delivered.');
    },
  },
  {
    slug: 'translate-six-chunks',
    family: 'delegation-items',
    variant: 'one translator, six different chunks',
    task: 'Translate the release notes into German.',
    note: 'translator delegated 6x with a different chunk each time',
    steps: (h) => {
      h.user('Translate these release notes into German.');
      const chunks = [
        ['Faster startup on large projects.', 'Schnellerer Start bei großen Projekten.'],
        ['New dark theme for the editor.', 'Neues dunkles Design für den Editor.'],
        ['Fixed a crash when opening empty files.', 'Absturz beim Öffnen leerer Dateien behoben.'],
        ['Search now supports regular expressions.', 'Die Suche unterstützt jetzt reguläre Ausdrücke.'],
        ['Deprecated the legacy sync API.', 'Die alte Sync-API ist veraltet.'],
        ['Improved accessibility of dialogs.', 'Verbesserte Barrierefreiheit von Dialogen.'],
      ] as const;
      chunks.forEach(([en, de], i) => {
        h.model(i === 0 ? 'Sending chunk by chunk.' : '').delegation('translator', `Translate into German (chunk ${i + 1}/6): ${en}`, de);
      });
      h.model(chunks.map(([, de]) => `- ${de}`).join('\n'));
    },
  },
  {
    slug: 'fast-growth-first-rounds',
    family: 'early-growth',
    variant: 'prompt 1.5x per call for three calls from a small start',
    systemTokens: 1400,
    task: 'Explain how the scheduler module works.',
    note: 'the first model calls grow ≥1.35x each because whole, different files are read into a small context; then growth slows',
    steps: (h) => {
      h.user('Explain how the scheduler module works.');
      h.model().call('read_file', { path: 'scheduler/__init__.py' }, 'from .core import Scheduler\nfrom .jobs import Job', { fullChars: 3200 });
      h.model().call('read_file', { path: 'scheduler/core.py' }, 'class Scheduler:\n    def __init__(self, clock, store): ...', { fullChars: 7600 });
      h.model().call('read_file', { path: 'scheduler/jobs.py' }, 'class Job:\n    def next_run(self, now): ...', { fullChars: 11000 });
      h.model().call('read_file', { path: 'scheduler/store.py' }, 'class Store:\n    def due(self, now): ...', { fullChars: 4000 });
      h.model('The Scheduler polls the Store for due Jobs every tick, runs them, and asks each Job for its next run time.');
    },
  },
  {
    slug: 'compaction-three-times',
    family: 'compaction',
    variant: 'rise and fall three times',
    task: 'Audit every migration file for destructive operations.',
    note: 'reads 12 different migration files; the context is compacted 3 times, prompt tokens rising then falling each time',
    steps: (h) => {
      h.user('Audit all migrations for destructive operations (DROP, TRUNCATE, column type changes).');
      for (let i = 1; i <= 12; i++) {
        h.model(i === 1 ? 'Going through the migrations in order.' : '').call(
          'read_file',
          { path: `migrations/${String(i).padStart(4, '0')}_step.sql` },
          `-- migration ${i}\nALTER TABLE t${i} ADD COLUMN c${i} text;`,
          { fullChars: 14000 },
        );
        if (i % 4 === 0)
          h.compact(`Audit notes after ${i} migrations: ${i === 8 ? 'migration 6 drops column legacy_id' : 'no destructive operation so far'}.`, 1200);
      }
      h.model('Only migration 0006 is destructive: it drops orders.legacy_id.');
    },
  },
  {
    slug: 'tables-same-shape',
    family: 'structured-text',
    variant: 'markdown tables with the same header',
    task: 'Compare the three cloud regions for our latency test.',
    note: 'three model texts with identical table layout and bullets, each about a different region',
    steps: (h) => {
      h.user('Compare eu-west-1, us-east-1 and ap-southeast-1 from the latency test results.');
      const table = (region: string, p50: number, p99: number): string =>
        `### ${region}\n\n| Metric | Value |\n|---|---|\n| p50 | ${p50} ms |\n| p99 | ${p99} ms |\n\n- ${p99 > 300 ? 'Too slow for checkout' : 'Acceptable'}`;
      // Each region's table is written in the same turn as the request for the next report.
      h.model().call('get_latency_report', { region: 'eu-west-1' }, '{"region": "eu-west-1", "p50_ms": 42, "p99_ms": 118, "samples": 12000}');
      h.model(table('eu-west-1', 42, 118)).call(
        'get_latency_report',
        { region: 'us-east-1' },
        '{"region": "us-east-1", "p50_ms": 97, "p99_ms": 240, "samples": 12000}',
      );
      h.model(table('us-east-1', 97, 240)).call(
        'get_latency_report',
        { region: 'ap-southeast-1' },
        '{"region": "ap-southeast-1", "p50_ms": 188, "p99_ms": 410, "samples": 12000}',
      );
      h.model(table('ap-southeast-1', 188, 410));
    },
  },
  {
    slug: 'japanese-different-queries',
    family: 'non-latin-varied',
    variant: 'Japanese queries that differ',
    task: '有給休暇の繰越ルールを教えてください。',
    note: 'three Japanese retrievals about different aspects, each with different passages',
    steps: (h) => {
      h.user('有給休暇の繰越ルールを教えてください。');
      h.model().retrieval('有給休暇 繰越 上限', ['[hr-jp-12] 未消化の有給休暇は翌年度に限り繰り越すことができ、上限は20日です。']);
      h.model().retrieval('有給休暇 時効 2年', ['[hr-jp-13] 有給休暇の請求権は付与日から2年で時効により消滅します。']);
      h.model().retrieval('有給休暇 買取 退職時', ['[hr-jp-19] 退職時に残った有給休暇の買取は行いません。']);
      h.model('未消化分は翌年度に限り最大20日まで繰り越せます。付与から2年で消滅し、退職時の買取はありません。');
    },
  },
  {
    slug: 'same-query-after-upload',
    family: 'rag-reingest',
    variant: 'identical query three times, ingestion events between',
    task: 'What is the on-call compensation?',
    note: 'the same retrieval query 3x; before the 2nd and the 3rd an outside event ingests new documents, and the results change each time',
    steps: (h) => {
      h.user('How much is on-call compensation?');
      h.model().retrieval('on-call compensation', ['[hr-handbook-7] On-call duties are described in the engineering handbook.']);
      h.model('The handbook only points elsewhere. I could not find the amounts.');
      h.user('[ingestion] 1 new document added to "hr": engineering-handbook.pdf');
      h.model('New documents were added; searching again.').retrieval('on-call compensation', [
        '[eng-handbook-22] On-call weeks are compensated with EUR 300 per week plus time off in lieu for incidents outside working hours.',
        '[hr-handbook-7] On-call duties are described in the engineering handbook.',
      ]);
      h.user('[ingestion] 1 new document added to "hr": on-call-policy-2025.pdf (supersedes 2023)');
      h.model('A newer policy was ingested; checking again.').retrieval('on-call compensation', [
        '[oncall-2025-3] From 2025, on-call weeks are compensated with EUR 400 per week; incidents at night add 2 hours of time off each.',
        '[eng-handbook-22] On-call weeks are compensated with EUR 300 per week plus time off in lieu for incidents outside working hours.',
      ]);
      h.model('Under the 2025 policy: EUR 400 per on-call week, plus 2 hours off per night incident.');
    },
  },
  {
    slug: 'ci-recheck-between-turns',
    family: 'polling',
    variant: 'same status call after each user turn, status changes',
    task: 'Tell me when the release pipeline is green.',
    note: 'get_pipeline the same id 4x, each after the user asks; queued → running (build) → running (deploy) → success',
    steps: (h) => {
      h.user('Is the release pipeline for v2.8.0 done?');
      const p = (status: string, stage: string): string => `{"pipeline_id": 55121, "ref": "v2.8.0", "status": "${status}", "stage": "${stage}"}`;
      h.model().call('get_pipeline', { pipeline_id: 55121 }, p('queued', 'none'));
      h.model('It is queued.');
      h.user('And now?');
      h.model().call('get_pipeline', { pipeline_id: 55121 }, p('running', 'build'));
      h.model('Running: build stage.');
      h.user('now?');
      h.model().call('get_pipeline', { pipeline_id: 55121 }, p('running', 'deploy-staging'));
      h.model('Deploying to staging.');
      h.user('and now');
      h.model().call('get_pipeline', { pipeline_id: 55121 }, p('success', 'done'));
      h.model('v2.8.0 is green and deployed.');
    },
  },
  {
    slug: 'alternating-two-jobs',
    family: 'polling',
    variant: 'A-B alternation with changing results',
    task: 'Wait for both data exports to finish.',
    note: 'get_export alternates between two ids 4 rounds; progress changes every call (period-2 look-alike with new results)',
    steps: (h) => {
      h.user('Let me know when both exports (exp_a1, exp_b7) are done.');
      const pct = [
        [10, 5],
        [45, 30],
        [80, 70],
        [100, 100],
      ];
      pct.forEach(([a, b], i) => {
        h.model(i === 0 ? 'Checking both exports.' : '').call(
          'get_export',
          { export_id: 'exp_a1' },
          `{"export_id": "exp_a1", "progress": ${a}, "status": "${a === 100 ? 'done' : 'running'}"}`,
        );
        h.model().call('get_export', { export_id: 'exp_b7' }, `{"export_id": "exp_b7", "progress": ${b}, "status": "${b === 100 ? 'done' : 'running'}"}`);
        if (i < 3) h.model().call('wait', { seconds: 60 }, 'waited 60s');
      });
      h.model('Both exports are done.');
    },
  },
  {
    slug: 'different-edits-same-error',
    family: 'edit-test-cycle',
    variant: 'three different edits, the same compile error, then the fix',
    task: 'Fix the build after the generics change.',
    note: 'tsc fails 3x with the same error, but each time after a different edit (each could have fixed it); the fourth edit does; not a loop',
    steps: (h) => {
      h.user('The build broke after I made Repository generic. Fix it.');
      const err = "src/repo.ts(27,5): error TS2322: Type 'T | undefined' is not assignable to type 'T'.";
      h.model().call('bash', { command: 'npx tsc --noEmit' }, err, { error: true });
      h.model().call(
        'edit_file',
        { path: 'src/repo.ts', old_str: 'const item = this.items.get(id);', new_str: 'const item = this.items.get(id) as T | undefined;' },
        'Applied 1 replacement in src/repo.ts.',
      );
      h.model().call('bash', { command: 'npx tsc --noEmit' }, err, { error: true });
      h.model().call(
        'edit_file',
        { path: 'src/repo.ts', old_str: 'find(id: string): T {', new_str: 'find(id: string): T {\n    if (!this.items.has(id)) throw new NotFound(id);' },
        'Applied 1 replacement in src/repo.ts.',
      );
      h.model().call('bash', { command: 'npx tsc --noEmit' }, err, { error: true });
      h.model('The narrowing from has() does not carry over to get(). Checking the value itself.').call(
        'edit_file',
        { path: 'src/repo.ts', old_str: '    return item;', new_str: '    if (item === undefined) throw new NotFound(id);\n    return item;' },
        'Applied 1 replacement in src/repo.ts.',
      );
      h.model().call('bash', { command: 'npx tsc --noEmit' }, '');
      h.model('The build passes.');
    },
  },
  {
    slug: 'next-order-phrase',
    family: 'structured-text',
    variant: 'the same sentence before each different lookup',
    tokens: 'null',
    task: 'Check which orders can be cancelled.',
    note: 'the model says "Let me check the next order." 5x, each time before a different order id',
    steps: (h) => {
      h.user('Which of my orders can I still cancel?');
      ['#W1100231', '#W2290117', '#W3356410', '#W4471908', '#W5520033'].forEach((id, i) => {
        h.model('Let me check the next order.').call('get_order_details', { order_id: id }, order(id, i === 2 ? 'pending' : 'processed', 'Backpack'));
      });
      h.model('Only #W3356410 is still pending and can be cancelled.');
    },
  },
  {
    slug: 'sleep-between-polls',
    family: 'polling',
    variant: 'identical sleeps between changing polls',
    task: 'Wait until the database restore finishes.',
    note: 'sleep 60 appears 4x with identical empty output, but each is followed by a status poll that changes (restoring 20% → 55% → 90% → available)',
    steps: (h) => {
      h.user('Tell me when the restore of db-staging is finished.');
      for (const [i, s] of ['restoring (20%)', 'restoring (55%)', 'restoring (90%)', 'available'].entries()) {
        h.model().call('bash', { command: 'sleep 60' }, '');
        h.model(i === 0 ? 'Checking the restore.' : '').call(
          'bash',
          { command: 'aws rds describe-db-instances --db-instance-identifier db-staging --query "DBInstances[0].DBInstanceStatus"' },
          `"${s}"`,
        );
      }
      h.model('db-staging is available again.');
    },
  },
  {
    slug: 'fifteen-file-rename',
    family: 'batch-edit',
    variant: 'the same replacement in 15 files',
    task: 'Rename getUserById to findUser everywhere.',
    note: 'edit_file with the same old/new strings in 15 different files',
    steps: (h) => {
      h.user('Rename getUserById to findUser everywhere.');
      const files = [
        'api/users.ts',
        'api/orders.ts',
        'api/admin.ts',
        'jobs/cleanup.ts',
        'jobs/digest.ts',
        'lib/auth.ts',
        'lib/audit.ts',
        'lib/billing.ts',
        'ui/Profile.tsx',
        'ui/Admin.tsx',
        'ui/Orders.tsx',
        'tests/users.test.ts',
        'tests/orders.test.ts',
        'tests/auth.test.ts',
        'scripts/backfill.ts',
      ];
      h.model().call('bash', { command: 'grep -rl getUserById src' }, files.map((f) => `src/${f}`).join('\n'));
      for (const f of files)
        h.model().call('edit_file', { path: `src/${f}`, old_str: 'getUserById(', new_str: 'findUser(' }, `Applied 1 replacement in src/${f}.`);
      h.model().call('bash', { command: 'npx tsc --noEmit && npm test --silent' }, 'Tests: 88 passed, 88 total');
      h.model('Renamed in 15 files; type check and tests pass.');
    },
  },
  {
    slug: 'grep-same-pattern-different-dirs',
    family: 'id-sweep',
    variant: 'the same pattern searched in different directories',
    task: 'Find every place that reads the REDIS_URL variable.',
    note: 'grep for REDIS_URL in 4 different directories, different results each time',
    steps: (h) => {
      h.user('Where do we read REDIS_URL?');
      for (const [dir, out] of [
        ['services/api', 'services/api/src/cache.ts:4:const url = process.env.REDIS_URL;'],
        ['services/worker', 'services/worker/config.py:12:REDIS_URL = os.environ["REDIS_URL"]'],
        ['infra', 'infra/helm/values.yaml:31:  REDIS_URL: redis://redis:6379/0'],
        ['scripts', ''],
      ] as const) {
        h.model().call('bash', { command: `grep -rn REDIS_URL ${dir}` }, out === '' ? '(no matches)' : out);
      }
      h.model('REDIS_URL is read in services/api/src/cache.ts and services/worker/config.py, and set in infra/helm/values.yaml.');
    },
  },
  {
    slug: 'same-input-three-reviewers',
    family: 'delegation-items',
    variant: 'one input to three different agents',
    task: 'Get security, performance and accessibility reviews of the checkout page.',
    note: 'the same input delegated to three different reviewer agents; three different answers',
    steps: (h) => {
      h.user('Review src/ui/Checkout.tsx for security, performance and accessibility.');
      const input = 'Review src/ui/Checkout.tsx and list problems.';
      h.model().delegation('security_reviewer', input, '1. Card number kept in component state and logged on error.');
      h.model().delegation('performance_reviewer', input, '1. Address autocomplete fires a request on every keystroke; debounce it.');
      h.model().delegation('a11y_reviewer', input, '1. Pay button has no accessible name when loading.\n2. Error messages are not announced (aria-live).');
      h.model('Three reviews collected: one security, one performance and two accessibility issues.');
    },
  },
  {
    slug: 'same-failure-thrice-with-edits',
    family: 'edit-test-cycle',
    variant: 'identical failures three times, but each after a different edit',
    task: 'Fix the flaky timezone test.',
    note: 'npm test returns the identical failure 3x; before each re-run the agent edits a different file, any of which could have fixed it; the 4th run passes',
    steps: (h) => {
      h.user('test/schedule.test.ts fails in CI since we moved to UTC runners.');
      const fail =
        "FAIL test/schedule.test.ts\n  ● nextRun › respects the user's timezone\n    Expected: 2024-06-13T07:00:00.000Z\n    Received: 2024-06-13T09:00:00.000Z\nTests: 1 failed, 63 passed, 64 total";
      h.model().call('bash', { command: 'npm test' }, fail, { error: true });
      h.model('Maybe the test sets TZ too late.').call(
        'edit_file',
        { path: 'test/setup.ts', old_str: "process.env.TZ = 'Europe/Berlin';", new_str: "process.env.TZ = 'UTC';" },
        'Applied 1 replacement in test/setup.ts.',
      );
      h.model().call('bash', { command: 'npm test' }, fail, { error: true });
      h.model('Not that. Perhaps the fixture date.').call(
        'edit_file',
        { path: 'test/fixtures/users.json', old_str: '"timezone": "Europe/Berlin"', new_str: '"timezone": "Europe/Berlin", "dst": true' },
        'Applied 1 replacement in test/fixtures/users.json.',
      );
      h.model().call('bash', { command: 'npm test' }, fail, { error: true });
      h.model("The code uses the machine timezone instead of the user's.").call(
        'edit_file',
        { path: 'src/schedule.ts', old_str: 'const local = new Date(run);', new_str: 'const local = toZonedTime(run, user.timezone);' },
        'Applied 1 replacement in src/schedule.ts.',
      );
      h.model().call('bash', { command: 'npm test' }, 'Tests: 64 passed, 64 total');
      h.model("Fixed: the schedule now converts with the user's timezone.");
    },
  },
  {
    slug: 'arabic-different-lookups',
    family: 'non-latin-varied',
    variant: 'Arabic arguments that differ',
    task: 'ما حالة طلباتي الثلاثة؟',
    note: 'three track_shipment calls with different Arabic city names and tracking ids; all results new',
    steps: (h) => {
      h.user('أين وصلت شحناتي الثلاث؟ الأرقام: 7781، 7790، 7802');
      for (const [id, city] of [
        ['7781', 'الرياض'],
        ['7790', 'جدة'],
        ['7802', 'الدمام'],
      ] as const) {
        h.model().call(
          'track_shipment',
          { tracking_id: id, destination_city: city },
          `{"tracking_id": "${id}", "status": "في الطريق", "city": "${city}", "eta": "2024-06-1${id.at(-1)}"}`,
        );
      }
      h.model('الشحنات الثلاث في الطريق إلى الرياض وجدة والدمام.');
    },
  },
  {
    slug: 'refined-queries',
    family: 'rag-refined',
    variant: 'each query narrower, each result new',
    task: 'Why do our Lambda functions time out when calling RDS?',
    note: 'four retrievals with progressively refined queries, each returning different passages',
    steps: (h) => {
      h.user('Our Lambdas time out when they call RDS. Why?');
      h.model().retrieval('lambda timeout rds', ['[aws-lambda-vpc-01] Functions connected to a VPC need a route to reach other services.']);
      h.model('Narrowing down to connection limits.').retrieval('lambda rds too many connections', [
        '[aws-rds-proxy-01] RDS Proxy pools connections so that many concurrent Lambda invocations share a few database connections.',
      ]);
      h.model('Checking security groups.').retrieval('lambda security group rds inbound 5432', [
        '[aws-vpc-sg-03] The database security group must allow inbound traffic from the Lambda security group on the database port.',
      ]);
      h.model('And the cold-start DNS angle.').retrieval('lambda vpc dns resolution rds endpoint', [
        '[aws-vpc-dns-02] Enable DNS hostnames and DNS resolution on the VPC so the RDS endpoint resolves.',
      ]);
      h.model('Most likely the RDS security group does not admit the Lambda security group on 5432; also consider RDS Proxy for connection pooling.');
    },
  },
];
