import type { HandCase } from './hand-case.ts';

/**
 * Hand-written loops: the subtle cases. Each label sits right after the
 * step it names. Rule of thumb (see the README): the third occurrence of
 * the repeated action is the first stuck step.
 */

const forecast = '{"city": "Oslo", "date": "2024-06-13", "high_c": 17, "low_c": 9, "precip_mm": 2.1, "wind_ms": 5}';

const refundPolicy = '[kb-refunds-01] (score 0.83) Refunds are issued to the original payment method within 5-7 business days after the return is received.';
const refundPolicy2 = '[kb-refunds-04] (score 0.77) Gift card purchases are non-refundable except where required by law.';

export const STUCK_CASES: readonly HandCase[] = [
  {
    slug: 'three-calls-think-between',
    family: 'spiral-identical',
    variant: 'minimal: exactly three identical calls, then recovers',
    task: 'What will the weather be in Oslo tomorrow?',
    note: 'get_forecast Oslo called 3x with identical arguments and result, only think() between; answers right after the third (still stuck at the third)',
    steps: (h) => {
      h.user('What will the weather be in Oslo tomorrow?');
      h.model().call('get_forecast', { city: 'Oslo', days: 1 }, forecast);
      h.model().call('think', { thought: 'I should make sure the forecast is current.' }, '');
      h.model().call('get_forecast', { city: 'Oslo', days: 1 }, forecast);
      h.model().call('think', { thought: 'Same data. Let me confirm once more.' }, '');
      h.model().call('get_forecast', { city: 'Oslo', days: 1 }, forecast).stuckHere('tool_spiral');
      h.model('Tomorrow in Oslo: 9–17 °C, light rain (about 2 mm), wind 5 m/s.');
    },
  },
  {
    slug: 'period-five-cycle',
    family: 'short-cycle',
    variant: 'period 5, three periods',
    task: 'The API container does not start; find out why.',
    note: 'cycle ls / cat docker-compose.yml / grep PORT .env / docker compose ps / docker compose logs api, identical outputs each period; stuck at the ls of the third period (step 22)',
    steps: (h) => {
      h.user('The api container keeps exiting. Can you find out why?');
      for (let r = 0; r < 3; r++) {
        h.model(r === 0 ? 'Let me look at the setup.' : '').call('bash', { command: 'ls' }, 'Dockerfile\ndocker-compose.yml\n.env\nsrc\npackage.json');
        if (r === 2) h.stuckHere('tool_spiral');
        h.model().call(
          'bash',
          { command: 'cat docker-compose.yml' },
          'services:\n  api:\n    build: .\n    ports:\n      - "${PORT}:3000"\n    env_file: .env\n  db:\n    image: postgres:16',
        );
        h.model().call('bash', { command: 'grep PORT .env' }, 'PORT=3000');
        h.model().call('bash', { command: 'docker compose ps' }, 'NAME      IMAGE         STATUS\napp-db-1  postgres:16   Up 2 hours');
        h.model(r === 0 ? 'The api service is not running. Let me check the logs.' : '').call(
          'bash',
          { command: 'docker compose logs api --tail 20' },
          "api-1  | Error: Cannot find module '/app/dist/main.js'\napi-1  | Node.js v20.11.1\napi-1 exited with code 1",
        );
      }
      h.model(
        'The container fails because /app/dist/main.js is missing: the image is built without running the build step. Add `RUN npm run build` to the Dockerfile.',
      );
    },
  },
  {
    slug: 'validation-error-varying-request-id',
    family: 'error-loop',
    variant: 'error text carries a fresh request id and timestamp',
    task: 'Create an invoice for ACME for 12 hours of consulting in May.',
    note: 'create_invoice rejected 4x with the same 422 (due_date format); only request_id and timestamp change; nothing in between fixes the date',
    steps: (h) => {
      h.user('Create an invoice for ACME GmbH: 12 hours consulting at EUR 140, May 2024, due in 30 days.');
      h.model().call('find_customer', { name: 'ACME GmbH' }, '{"customer_id": "cus_7Qp2", "name": "ACME GmbH", "currency": "EUR"}');
      const args = { customer_id: 'cus_7Qp2', lines: [{ description: 'Consulting May 2024', quantity: 12, unit_price: 140 }], due_date: '30/06/2024' };
      const err = (rid: string, ts: string): string =>
        `{"status": 422, "error": "validation_error", "message": "due_date must be an ISO 8601 date (YYYY-MM-DD)", "request_id": "${rid}", "timestamp": "${ts}"}`;
      h.model('Creating the invoice.').call('create_invoice', args, err('req_0f3a9c1e', '2024-06-03T10:14:02Z'), { error: true });
      h.model('The request failed; retrying.').call('create_invoice', args, err('req_7b21d4aa', '2024-06-03T10:14:09Z'), { error: true });
      h.model('').call('create_invoice', args, err('req_c9e0115f', '2024-06-03T10:14:15Z'), { error: true }).stuckHere('tool_spiral');
      h.model('Trying once more.').call('create_invoice', args, err('req_2d6f8b30', '2024-06-03T10:14:22Z'), { error: true });
      h.model('I could not create the invoice; the service keeps rejecting it with a validation error.');
    },
  },
  {
    slug: 'curl-dead-server-timing-noise',
    family: 'error-loop',
    variant: 'only the milliseconds in the error differ',
    task: 'Start the dev server and check the health endpoint.',
    note: 'the server crashed at start (port in use); curl of /health repeated 4x without restarting anything, "Failed to connect" each time with different ms; stuck at the third curl',
    steps: (h) => {
      h.user('Start the dev server and make sure /health answers.');
      h.model().call(
        'bash',
        { command: 'npm run dev &' },
        '> api@1.4.0 dev\n> node --watch src/server.js\n\nError: listen EADDRINUSE: address already in use :::8080\n    at Server.setupListenHandle [as _listen2] (node:net:1897:16)',
      );
      h.model('Let me check the health endpoint.').call(
        'bash',
        { command: 'curl -s http://localhost:8080/health' },
        "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server",
        { error: true },
      );
      h.model('Maybe it needs a moment.').call(
        'bash',
        { command: 'curl -s http://localhost:8080/health' },
        "curl: (7) Failed to connect to localhost port 8080 after 2 ms: Couldn't connect to server",
        { error: true },
      );
      h.model('')
        .call(
          'bash',
          { command: 'curl -s http://localhost:8080/health' },
          "curl: (7) Failed to connect to localhost port 8080 after 1 ms: Couldn't connect to server",
          { error: true },
        )
        .stuckHere('tool_spiral');
      h.model('').call(
        'bash',
        { command: 'curl -s http://localhost:8080/health' },
        "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Couldn't connect to server",
        { error: true },
      );
      h.model('The server did not start: port 8080 was already in use. Let me find the process.').call(
        'bash',
        { command: 'lsof -i :8080' },
        'COMMAND   PID USER   FD   TYPE DEVICE SIZE/OFF NODE NAME\nnode    41822  dev   23u  IPv6 0x91a      0t0  TCP *:http-alt (LISTEN)',
      );
      h.model('An old dev server (PID 41822) still holds port 8080. Stop it with `kill 41822` and start again.');
    },
  },
  {
    slug: 'next-page-past-the-end',
    family: 'spiral-identical',
    variant: 'pagination that goes on after the last page',
    task: 'Export all open tickets tagged "billing".',
    note: 'next_page returns new rows twice (productive), then "no more results" 4x; the loop is the repeated call after the end, stuck at the third "no more results"',
    steps: (h) => {
      h.user('Export all open tickets tagged billing into a list for me.');
      h.model().call(
        'search_tickets',
        { tag: 'billing', status: 'open', limit: 3 },
        '{"tickets": [{"id": 4411, "subject": "Double charge"}, {"id": 4415, "subject": "VAT missing"}, {"id": 4420, "subject": "Refund pending"}], "has_more": true}',
      );
      h.model().call(
        'next_page',
        {},
        '{"tickets": [{"id": 4431, "subject": "Card declined"}, {"id": 4437, "subject": "Invoice address"}, {"id": 4452, "subject": "Plan downgrade"}], "has_more": true}',
      );
      h.model().call('next_page', {}, '{"tickets": [{"id": 4460, "subject": "Wrong currency"}], "has_more": false}');
      h.model().call('next_page', {}, '{"tickets": [], "has_more": false, "message": "no more results"}');
      h.model('').call('next_page', {}, '{"tickets": [], "has_more": false, "message": "no more results"}');
      h.model('').call('next_page', {}, '{"tickets": [], "has_more": false, "message": "no more results"}').stuckHere('tool_spiral');
      h.model('').call('next_page', {}, '{"tickets": [], "has_more": false, "message": "no more results"}');
      h.model('There are 7 open billing tickets: 4411, 4415, 4420, 4431, 4437, 4452, 4460.');
    },
  },
  {
    slug: 'thumbs-up-turns',
    family: 'loop-across-turns',
    variant: 'user turns are emoji and "ok"',
    task: 'Check whether the nightly backup of db-prod succeeded.',
    note: 'get_backup_status db-prod repeated 4x with the same result; the user turns between (👍, ok, k) carry nothing; stuck at the third call',
    steps: (h) => {
      h.user('Did the nightly backup of db-prod succeed?');
      const status =
        '{"database": "db-prod", "last_backup": "2024-06-12T02:00:14Z", "status": "failed", "error": "insufficient space on backup volume (98% used)"}';
      h.model().call('get_backup_status', { database: 'db-prod' }, status);
      h.model('The last backup failed: the backup volume is 98% full.');
      h.user('👍');
      h.model().call('get_backup_status', { database: 'db-prod' }, status);
      h.model('Still failed for the same reason.');
      h.user('ok');
      h.model().call('get_backup_status', { database: 'db-prod' }, status).stuckHere('tool_spiral');
      h.model('It is still the failed backup from 02:00.');
      h.user('k');
      h.model().call('get_backup_status', { database: 'db-prod' }, status);
      h.model('No change: the 02:00 backup failed for lack of space.');
    },
  },
  {
    slug: 'empty-continue-turns',
    family: 'loop-across-turns',
    variant: 'auto-continue with empty user turns',
    task: 'Find the owner of the payments-eu Kubernetes namespace.',
    note: 'kubectl get namespace payments-eu -o yaml repeated 4x with identical output; the user steps in between are empty auto-continue turns',
    steps: (h) => {
      h.user('Who owns the payments-eu namespace?');
      const ns =
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: payments-eu\n  labels:\n    kubernetes.io/metadata.name: payments-eu\n  creationTimestamp: "2023-02-11T09:12:44Z"\nstatus:\n  phase: Active';
      h.model().call('bash', { command: 'kubectl get namespace payments-eu -o yaml' }, ns);
      h.user('');
      h.model('The namespace has no owner label. Let me look again.').call('bash', { command: 'kubectl get namespace payments-eu -o yaml' }, ns);
      h.user('');
      h.model('').call('bash', { command: 'kubectl get namespace payments-eu -o yaml' }, ns).stuckHere('tool_spiral');
      h.user('');
      h.model('').call('bash', { command: 'kubectl get namespace payments-eu -o yaml' }, ns);
    },
  },
  {
    slug: 'arabic-identical-kb-search',
    family: 'non-latin-loop',
    variant: 'Arabic, identical query',
    task: 'كيف أعيد تعيين كلمة المرور إذا لم يصلني البريد؟',
    note: 'search_kb with the same Arabic query 4x, same two articles; stuck at the third',
    steps: (h) => {
      h.user('كيف أعيد تعيين كلمة المرور إذا لم يصلني البريد؟');
      const q = { query: 'إعادة تعيين كلمة المرور لم يصل البريد' };
      const res =
        '[{"id": "kb-ar-112", "title": "إعادة تعيين كلمة المرور", "snippet": "اضغط على «نسيت كلمة المرور» وأدخل بريدك الإلكتروني."}, {"id": "kb-ar-087", "title": "لم تصلني رسالة التحقق", "snippet": "تحقق من مجلد الرسائل غير المرغوب فيها."}]';
      h.model().call('search_kb', q, res);
      h.model('سأبحث مرة أخرى عن حل أدق.').call('search_kb', q, res);
      h.model('').call('search_kb', q, res).stuckHere('tool_spiral');
      h.model('').call('search_kb', q, res);
      h.model('اضغط على «نسيت كلمة المرور»، ثم تحقق من مجلد الرسائل غير المرغوب فيها. إذا لم تصل الرسالة، تواصل مع الدعم.');
    },
  },
  {
    slug: 'korean-whitespace-variants',
    family: 'non-latin-loop',
    variant: 'Korean, spacing variants of one query',
    task: '방수 무선 이어폰 중 가장 저렴한 제품을 찾아 주세요.',
    note: 'search_products with "무선 이어폰 방수" spelled with different spacing 4x; identical results; stuck at the third',
    steps: (h) => {
      h.user('방수 무선 이어폰 중 가장 저렴한 제품을 찾아 주세요.');
      const res =
        '[{"product_id": "6938111410", "name": "Wireless Earbuds", "price_from": 64.9, "water_resistance": "IPX4"}, {"product_id": "9365332051", "name": "Sport Earbuds", "price_from": 89.0, "water_resistance": "IPX7"}]';
      h.model().call('search_products', { query: '무선 이어폰 방수' }, res);
      h.model('').call('search_products', { query: '무선이어폰 방수' }, res);
      h.model('').call('search_products', { query: '무선  이어폰  방수' }, res).stuckHere('tool_spiral');
      h.model('').call('search_products', { query: ' 무선 이어폰 방수' }, res);
      h.model('가장 저렴한 방수 무선 이어폰은 Wireless Earbuds(IPX4)로 64.9달러부터입니다.');
    },
  },
  {
    slug: 'key-order-only',
    family: 'spiral-varied-args',
    variant: 'JSON keys reordered',
    task: 'Why is the May invoice of customer C-1042 higher than April?',
    note: 'get_invoice for the same customer and month 3x with keys in a different order, same result, never compared with April; stuck at the third',
    steps: (h) => {
      h.user('Why is the May invoice for C-1042 higher than April?');
      const may =
        '{"invoice_id": "INV-2024-05-1042", "total": 1840.0, "lines": [{"item": "Pro plan", "amount": 1200.0}, {"item": "Overage 320 GB", "amount": 640.0}]}';
      h.model().call('get_invoice', { customer_id: 'C-1042', month: '2024-05' }, may);
      h.model('Let me look at it again.').call('get_invoice', { month: '2024-05', customer_id: 'C-1042' }, may);
      h.model('').call('get_invoice', { customer_id: 'C-1042', month: '2024-05' }, may).stuckHere('tool_spiral');
      h.model('').call('get_invoice', { month: '2024-05', customer_id: 'C-1042' }, may);
      h.model('May includes an overage charge of 640.00 for 320 GB above the plan limit.');
    },
  },
  {
    slug: 'raw-json-string-args',
    family: 'spiral-varied-args',
    variant: 'arguments as raw JSON text with different spacing',
    task: 'Summarise our refund policy for gift cards.',
    note: 'kb_search called 4x; arguments are raw JSON text differing only in spacing (and once an object); same two results; stuck at the third',
    steps: (h) => {
      h.user('What is our refund policy for gift cards?');
      const res = `${refundPolicy}\n${refundPolicy2}`;
      h.model().call('kb_search', '{"query":"refund policy gift cards"}', res);
      h.model('').call('kb_search', '{"query": "refund policy gift cards"}', res);
      h.model('').call('kb_search', { query: 'refund policy gift cards' }, res).stuckHere('tool_spiral');
      h.model('').call('kb_search', '{ "query" : "refund policy gift cards" }', res);
      h.model('Gift card purchases are non-refundable except where the law requires it; other refunds go to the original payment method in 5–7 business days.');
    },
  },
  {
    slug: 'reworded-not-found',
    family: 'delegation-loop',
    variant: 'the answer is reworded, the content is the same',
    task: 'Find the number of employees of Keystone Pallet Co.',
    note: 'research_agent re-asked 4x; each answer is worded differently but says the same (not found); stuck at the third ask',
    steps: (h) => {
      h.user('How many employees does Keystone Pallet Co. have?');
      h.model('Asking the research agent.').delegation(
        'research_agent',
        'Find the number of employees of Keystone Pallet Co.',
        'I could not find a published headcount for Keystone Pallet Co.; it is a private company and does not report employee numbers.',
      );
      h.model('Ask again, more carefully.').delegation(
        'research_agent',
        'Search again: employee count of Keystone Pallet Co.',
        'There is no public employee figure for Keystone Pallet Co. The firm is privately held and publishes no headcount.',
      );
      h.model('')
        .delegation(
          'research_agent',
          'Look harder for Keystone Pallet Co. headcount.',
          'Keystone Pallet Co. is private; no source lists how many people it employs.',
        )
        .stuckHere('delegation_loop');
      h.model('').delegation(
        'research_agent',
        'Find the number of employees of Keystone Pallet Co. Try every source.',
        'I was unable to find the employee count: Keystone Pallet Co. does not publish it, being a private company.',
      );
      h.model('Keystone Pallet Co. does not publish its headcount.');
    },
  },
  {
    slug: 'string-args-subagent-tool',
    family: 'subagent-tool-loop',
    variant: 'sub-agent tool with free-text arguments',
    task: "Get the legal team's opinion on the new data retention clause.",
    note: 'legal_agent tool called 3x with the same free-text request and the same answer; stuck at the third',
    steps: (h) => {
      h.user('What does legal say about clause 7.3 (data retention 10 years)?');
      const ans =
        'Clause 7.3 conflicts with GDPR Art. 5(1)(e) storage limitation unless a legal obligation requires 10 years; ask the customer for the legal basis.';
      h.model().call('legal_agent', 'Review clause 7.3: "Provider retains customer data for 10 years after termination."', ans);
      h.model('I need a clearer answer.').call('legal_agent', 'Review clause 7.3: "Provider retains customer data for 10 years after termination."', ans);
      h.model('').call('legal_agent', 'Review clause 7.3: "Provider retains customer data for 10 years after termination."', ans).stuckHere('delegation_loop');
      h.model(ans);
    },
  },
  {
    slug: 'drift-despite-compaction',
    family: 'token-drift',
    variant: 'grows, compacts, grows again',
    task: 'Find why the nightly ETL job is slow since Monday.',
    note: 'from step 7 every round pulls a larger slice of the same ETL log; the third consecutive ≥1.35x growth is the model step 13; a later compaction does not stop it, the pulls start again',
    systemTokens: 3800,
    steps: (h) => {
      h.user('The nightly ETL job takes 3 hours instead of 40 minutes since Monday. Why?');
      h.model().call('bash', { command: 'etl status nightly' }, 'job nightly: last run 2024-06-12 01:00-04:02 (3h02m), previous 2024-06-09 01:00-01:41');
      h.model().call(
        'bash',
        { command: 'git log --since=2024-06-08 --oneline -- etl/' },
        'a41c2e9 Add customer_events to nightly load\n7d0b11f Bump pandas to 2.2.2',
      );
      h.model().call(
        'bash',
        { command: 'cat etl/jobs/nightly.yaml' },
        'steps:\n  - extract: orders\n  - extract: customer_events\n  - transform: normalize\n  - load: warehouse',
      );
      h.model('Let me read the job log.').driftFromHere();
      const log = (n: number): string =>
        Array.from(
          { length: 30 },
          (_, i) => `2024-06-12T0${1 + (i % 3)}:${String(10 + i).padStart(2, '0')}:0${i % 10} INFO extract customer_events batch ${n * 30 + i} rows=50000`,
        ).join('\n');
      const pull = (cmd: string, n: number, factor: number): void => {
        h.call('bash', { command: cmd }, log(n), { fullChars: Math.round(h.contextTokens * factor * 4) });
      };
      pull('tail -n 2000 /var/log/etl/nightly.log', 0, 0.6);
      h.model('Nothing obvious. Let me look at more of the log.');
      pull('tail -n 8000 /var/log/etl/nightly.log', 1, 0.55);
      h.model('Still only batch lines. More.');
      pull('tail -n 30000 /var/log/etl/nightly.log', 2, 0.5);
      h.model('I need the whole log.');
      pull('cat /var/log/etl/nightly.log', 3, 0.5);
      h.compact('Summary: nightly ETL slow since a41c2e9 added customer_events; log is long batch output, cause not yet found.', 2000);
      h.model('Let me read the log again from the start.');
      pull('cat /var/log/etl/nightly.log', 3, 1.4);
      h.model('And the previous run for comparison.');
      pull('cat /var/log/etl/nightly.log.1 /var/log/etl/nightly.log', 4, 0.7);
      h.model('');
    },
  },
  {
    slug: 'same-answer-same-code-block',
    family: 'text-repetition',
    variant: 'paragraph and code block both repeated',
    task: 'Fix the off-by-one in paginate().',
    note: 'the model answers 3x with the same paragraph and identical code block although the user says it is unchanged; stuck at the third answer',
    steps: (h) => {
      h.user('paginate(items, page=2, size=10) returns items 11-21, it should be 11-20. Fix it.');
      const answer =
        'You are right, there is an off-by-one error in the slice. Here is the corrected function:\n\n```python\ndef paginate(items, page, size):\n    start = (page - 1) * size\n    return items[start:start + size + 1]\n```\n\nThis returns exactly `size` items per page.';
      h.model(answer);
      h.user('That is the same code as before, it still returns 11 items.');
      h.model(answer);
      h.user('Again the same. The +1 is the bug.');
      h.model(answer).stuckHere('other');
      h.user('Stop. Remove the + 1.');
      h.model('Apologies. Corrected:\n\n```python\ndef paginate(items, page, size):\n    start = (page - 1) * size\n    return items[start:start + size]\n```');
    },
  },
  {
    slug: 'recovers-then-second-loop',
    family: 'spiral-identical',
    variant: 'two separate loops; the label is the first',
    task: 'Rotate the API key of the staging environment.',
    note: "vault read repeated 3x (steps 2, 4, 6) then progress; later a second loop on the deploy status; first_stuck_step is the first loop's third call",
    steps: (h) => {
      h.user('Rotate the staging API key and redeploy.');
      const secret =
        'Key                 Value\n---                 -----\nrefresh_interval    768h\napi_key             stg_live_9f3c…(redacted)\nrotated_at          2024-03-01T08:00:00Z';
      h.model().call('bash', { command: 'vault read secret/staging/api' }, secret);
      h.model('').call('bash', { command: 'vault read secret/staging/api' }, secret);
      h.model('').call('bash', { command: 'vault read secret/staging/api' }, secret).stuckHere('tool_spiral');
      h.model('I keep reading the same secret. Time to rotate it.').call(
        'bash',
        { command: 'vault write -f secret/staging/api/rotate' },
        'Success! Data written to: secret/staging/api/rotate',
      );
      h.model().call('bash', { command: 'kubectl rollout restart deploy/api -n staging' }, 'deployment.apps/api restarted');
      const st =
        'Waiting for deployment "api" rollout to finish: 0 of 3 updated replicas are available...\nerror: deployment "api" exceeded its progress deadline';
      h.model().call('bash', { command: 'kubectl rollout status deploy/api -n staging --timeout=10s' }, st, { error: true });
      h.model('').call('bash', { command: 'kubectl rollout status deploy/api -n staging --timeout=10s' }, st, { error: true });
      h.model('').call('bash', { command: 'kubectl rollout status deploy/api -n staging --timeout=10s' }, st, { error: true });
      h.model('The rollout is stuck; the pods probably fail with the new key.');
    },
  },
  {
    slug: 'wrong-flag-identical-submit',
    family: 'error-loop',
    variant: 'SWE-agent CTF submit, no token counts',
    tokens: 'null',
    task: 'Capture the flag: decode the binary string in eps1.1.mpeg.',
    note: 'submit with the byte-identical flag 4x, "Wrong flag!" each time, empty reasoning between; escapes by quoting; stuck at the third submit',
    steps: (h) => {
      h.model('We found a string which might be the flag, try to submit it\n').call('submit', 'flag{People always make the best exploits.}', 'Wrong flag!', {
        error: true,
      });
      h.model('\n').call('submit', 'flag{People always make the best exploits.}', 'Wrong flag!', { error: true });
      h.model('\n').call('submit', 'flag{People always make the best exploits.}', 'Wrong flag!', { error: true }).stuckHere('tool_spiral');
      h.model('\n').call('submit', 'flag{People always make the best exploits.}', 'Wrong flag!', { error: true });
      h.model('The shell may be splitting the argument on spaces; quote it.\n').call(
        'submit',
        "'flag{People always make the best exploits.}'",
        '\nflag{People always make the best exploits.}\n',
      );
    },
  },
  {
    slug: 'same-passages-different-order',
    family: 'rag-fixation',
    variant: 'retriever returns the same passages in another order',
    task: 'Does our SLA cover scheduled maintenance windows?',
    note: 'four near-duplicate queries; the same three passages come back, ordered differently; nothing new; stuck at the third retrieval',
    steps: (h) => {
      h.user('Does our SLA count scheduled maintenance as downtime?');
      const a = '[sla-2.1] (score 0.81) Monthly uptime is measured over each calendar month, excluding Excluded Downtime.';
      const b = '[sla-4.3] (score 0.78) Service credits are 10% of the monthly fee for uptime below 99.9%.';
      const c = '[sla-1.0] (score 0.74) This SLA applies to the Production tier only.';
      h.model().retrieval('SLA scheduled maintenance downtime', [a, b, c]);
      h.model('Not explicit. Searching again.').retrieval('does SLA count scheduled maintenance as downtime', [b, a, c]);
      h.model('').retrieval('scheduled maintenance downtime SLA', [a, c, b]).stuckHere('rag_fixation');
      h.model('').retrieval('SLA maintenance window downtime', [c, a, b]);
      h.model('The retrieved sections mention "Excluded Downtime" but do not define it; I could not confirm whether maintenance is excluded.');
    },
  },
  {
    slug: 'test-status-alternation',
    family: 'short-cycle',
    variant: 'A-B alternation, no edits',
    task: 'Make the failing lint check pass.',
    note: 'npm run lint and git status alternate 4x with identical outputs and no edit; period 2; stuck at the first step of the third period',
    steps: (h) => {
      h.user('CI fails on lint. Fix it please.');
      const lint =
        "/app/src/routes/user.ts\n  14:7  error  'unused' is assigned a value but never used  @typescript-eslint/no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)";
      const status = 'On branch fix/lint\nnothing to commit, working tree clean';
      for (let r = 0; r < 4; r++) {
        h.model(r === 0 ? 'Let me run the linter.' : '').call('bash', { command: 'npm run lint' }, lint, { error: true });
        if (r === 2) h.stuckHere('tool_spiral');
        h.model('').call('bash', { command: 'git status' }, status);
      }
      h.model('The error is an unused variable on line 14 of src/routes/user.ts; remove it.');
    },
  },
  {
    slug: 'loop-late-in-long-run',
    family: 'spiral-identical',
    variant: 'loop starts after 30 productive steps',
    task: 'Upgrade the project from Express 4 to Express 5.',
    note: 'productive upgrade work for 30 steps, then `npm test` re-run 4x without changes (steps 32, 34, 36, 38), same failure; stuck at step 36',
    steps: (h) => {
      h.user('Upgrade this service from Express 4 to Express 5 and keep the tests green.');
      const files = ['src/app.js', 'src/routes/users.js', 'src/routes/orders.js', 'src/middleware/auth.js', 'src/middleware/errors.js', 'src/routes/health.js'];
      h.model('Let me check the current version.').call('bash', { command: 'npm ls express' }, 'api@2.3.0 /app\n└── express@4.19.2');
      h.model().call('bash', { command: 'npm install express@5' }, 'changed 4 packages, and audited 212 packages in 3s\nfound 0 vulnerabilities');
      for (const f of files)
        h.model(`Checking ${f}.`).call(
          'read_file',
          { path: f },
          `// ${f}\nconst express = require('express');\nconst router = express.Router();\nrouter.get('/:id?', handler);\nmodule.exports = router;`,
        );
      for (const f of files.slice(1, 5))
        h.model('').call(
          'edit_file',
          { path: f, old_str: "router.get('/:id?', handler);", new_str: "router.get('/{:id}', handler);" },
          `Applied 1 replacement in ${f}.`,
        );
      h.model('').call(
        'edit_file',
        { path: 'src/middleware/errors.js', old_str: 'app.del(', new_str: 'app.delete(' },
        'Applied 1 replacement in src/middleware/errors.js.',
      );
      h.model('').call('bash', { command: 'grep -rn "req.param(" src' }, 'src/routes/orders.js:41:  const id = req.param("id");');
      h.model('').call(
        'edit_file',
        { path: 'src/routes/orders.js', old_str: 'req.param("id")', new_str: 'req.params.id' },
        'Applied 1 replacement in src/routes/orders.js.',
      );
      const fail =
        'FAIL test/health.test.js\n  ● GET /health › returns 200\n    expected 200 "OK", got 404 "Not Found"\n\nTests: 1 failed, 41 passed, 42 total';
      h.model('Running the tests.').call('bash', { command: 'npm test' }, fail, { error: true });
      h.model('').call('bash', { command: 'npm test' }, fail, { error: true });
      h.model('').call('bash', { command: 'npm test' }, fail, { error: true }).stuckHere('tool_spiral');
      h.model('').call('bash', { command: 'npm test' }, fail, { error: true });
      h.model('The health route still uses an Express 4 wildcard; it needs the `/{*splat}` syntax.');
    },
  },
  {
    slug: 'non-transient-400-retried',
    family: 'error-loop',
    variant: 'a 400 treated like a transient error',
    task: 'Schedule the quarterly report email for 13 May 2024.',
    note: 'schedule_email retried 4x with the same invalid date format; a 400 is not transient, so the retries cannot succeed; stuck at the third',
    steps: (h) => {
      h.user('Schedule the quarterly report email to finance@ for 13 May 2024, 9:00.');
      const args = { to: 'finance@example.com', template: 'quarterly-report', send_at: '13/05/2024 09:00' };
      const err = 'HTTP 400 Bad Request: send_at: invalid datetime "13/05/2024 09:00", expected RFC 3339';
      h.model().call('schedule_email', args, err, { error: true });
      h.model('Temporary error; retrying.').call('schedule_email', args, err, { error: true });
      h.model('Retrying again.').call('schedule_email', args, err, { error: true }).stuckHere('tool_spiral');
      h.model('One more retry.').call('schedule_email', args, err, { error: true });
      h.model('Scheduling failed.');
    },
  },
  {
    slug: 'planner-same-plan-tool-style',
    family: 'short-cycle',
    variant: 'planner and executor as tools, period 2',
    task: 'Book a team offsite for 12 people in Lisbon in September.',
    note: 'planner tool returns the same plan and executor tool the same "no venue" result 3 periods in a row; stuck at the planner call of the third period',
    steps: (h) => {
      h.user('Organise a 2-day offsite for 12 people in Lisbon, second week of September, budget EUR 6,000.');
      const plan = '1. Find a venue for 12 people in Lisbon, 9-10 September.\n2. Book it.\n3. Book hotel rooms nearby.';
      const exec = 'No venue found for 12 people on 9-10 September within EUR 6,000.';
      for (let r = 0; r < 3; r++) {
        h.model(r === 0 ? 'Planning.' : 'Re-planning.').call('planner_agent', { goal: 'Lisbon offsite, 12 people, 9-10 Sep, EUR 6,000' }, plan);
        if (r === 2) h.stuckHere('delegation_loop');
        h.model('').call('executor_agent', { step: 'Find a venue for 12 people in Lisbon, 9-10 September.' }, exec);
      }
      h.model('I could not find a venue within the budget for those dates. Could the dates or budget move?');
    },
  },
];
