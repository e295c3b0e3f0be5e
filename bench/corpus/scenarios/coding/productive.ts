import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { thirdDriftGrowth } from '../../trajectory-builder.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import type { Repo } from './repos.ts';
import { brokenFix, explore, fixAndFinish, startCoding } from './session.ts';
import { issueFailures, type Failure } from './test-output.ts';
import { fileLines } from './virtual-files.ts';
import type { Workbench } from './workbench.ts';

/** Module names for files the fixtures list only by path (many-file work). */
const MODULES: Record<Repo['language'], readonly string[]> = {
  python: [
    'jobs/reconcile',
    'jobs/payouts',
    'services/ledger',
    'services/notifications',
    'api/admin',
    'api/webhooks_v2',
    'utils/time',
    'utils/retry',
    'reports/daily',
    'reports/monthly',
    'integrations/stripe',
    'integrations/adyen',
    'tasks/cleanup',
    'tasks/exports',
    'audit/log',
    'auth/tokens',
    'cli/commands',
    'storage/s3',
  ],
  typescript: [
    'jobs/reconcile',
    'jobs/export',
    'services/ledger',
    'services/notify',
    'api/admin',
    'api/health',
    'utils/time',
    'utils/retry',
    'reports/daily',
    'reports/monthly',
    'integrations/bank',
    'integrations/fx',
    'tasks/cleanup',
    'audit/log',
    'auth/session',
    'cli/commands',
    'storage/blob',
    'hooks/usePoll',
  ],
  go: [
    'internal/jobs/reconcile',
    'internal/jobs/cleanup',
    'internal/metrics/collector',
    'internal/auth/token',
    'internal/store/cache',
    'internal/config/load',
    'internal/retry/backoff',
    'cmd/server/main',
    'cmd/cli/main',
    'internal/audit/log',
    'internal/httputil/write',
    'internal/trace/span',
  ],
  rust: [
    'src/compaction/planner',
    'src/compaction/merge',
    'src/index/btree',
    'src/index/hash',
    'src/io/mmap',
    'src/io/buffer',
    'src/net/server',
    'src/net/codec',
    'src/metrics',
    'src/config',
    'src/snapshot',
    'src/recovery',
  ],
};

const EXT: Record<Repo['language'], string> = { python: 'py', typescript: 'ts', go: 'go', rust: 'rs' };

function extraPaths(w: Workbench, count: number): string[] {
  const lang = w.repo.language;
  const base = lang === 'python' ? (w.repo.files[0]?.path.split('/').slice(0, -1).join('/') ?? 'src') : lang === 'typescript' ? 'src' : '';
  return w.rng.sample(MODULES[lang], count).map((m) => `${base ? `${base}/` : ''}${m}.${EXT[lang]}`.replace(/^src\/src\//, 'src/'));
}

/** One file read in successive chunks (offsets), or with identical scroll calls. */
export function codingChunkedRead(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'chunked read' });
  const { b, rng } = w;
  const issue = w.issue;
  // The agent reads the repository's largest module in full before fixing the issue.
  const big = [...w.repo.files].sort((x, y) => y.lines - x.lines)[0]?.path ?? issue.file;
  w.grep(issue.symbol, '', w.style === 'swe' ? `Let's find \`${issue.symbol}\`.` : '');
  const total = w.lines(big).length;
  const chunk = w.style === 'swe' ? 100 : Math.min(rng.pick([40, 50, 60, 80, 100]), Math.ceil(total / 4));
  const calls: number[] = [];
  if (w.style === 'swe') {
    calls.push(w.read(big, 1, 100, `Let's open \`${big}\` and read it from the top to understand the module.`));
    const scrolls = Math.ceil(total / 100) - 1;
    for (let k = 0; k < scrolls; k++)
      calls.push(
        w.scrollDown(cycle(["Let's scroll down to see more of the file.", "Let's keep scrolling to find the rest of the logic.", 'Scrolling further.'], k)),
      );
  } else if (w.style === 'generic' && rng.chance(0.6)) {
    // A stateful chunk reader: identical arguments, the next chunk each time.
    const lines = w.lines(big);
    for (let from = 1, k = 0; from <= total; from += chunk, k++) {
      w.say(k === 0 ? `I'll read ${big} chunk by chunk.` : rng.pick(['', 'Next chunk.', 'Continuing.']));
      const slice = lines
        .slice(from - 1, from - 1 + chunk)
        .map((l, i) => `${from + i}:${l}`)
        .join('\n');
      calls.push(
        b.call('read_file_chunk', { path: big }, `[chunk ${k + 1}/${Math.ceil(total / chunk)}, lines ${from}-${Math.min(total, from + chunk - 1)}]\n${slice}`),
      );
    }
  } else {
    for (let from = 1; from <= total; from += chunk)
      calls.push(
        w.read(big, from, chunk, from === 1 ? rng.pick(['', `Let me read ${big} in full, in chunks.`]) : rng.pick(['', '', 'Continuing with the next part.'])),
      );
  }
  if (big !== issue.file)
    w.read(issue.file, Math.max(1, w.bugLine - 20), 40, w.style === 'swe' ? `Now let's look at \`${issue.symbol}\` in \`${issue.file}\`.` : '');
  const failures = issueFailures(issue);
  w.tests(failures, '');
  fixAndFinish(w);
  b.outcome({ resolved: true });
  b.note(
    `${calls.length} reads of ${big} (${w.style === 'swe' ? 'open then identical scroll_down calls' : 'successive offsets or a chunk cursor'}), each returning new lines; then a fix`,
  );
  return b.build();
}

/** Reading (and partly editing) many different files. */
export function codingManyFiles(ctx: ScenarioContext): CorpusTrajectory {
  const goal = cycle(['audit logging', 'timeouts', 'docstrings', 'error handling'] as const, ctx.index);
  const w = startCoding(ctx, { variant: `${goal} across modules`, task: undefined });
  const { b, rng } = w;
  const paths = [...w.repo.files.map((f) => f.path).filter((p) => !/test/.test(p)), ...extraPaths(w, rng.int(4, 8))];
  const chosen = rng.sample(paths, Math.min(paths.length, rng.int(8, 14)));
  b.user(
    `Before fixing the issue, check every module for ${goal === 'audit logging' ? 'places that change money but do not write an audit log entry' : goal === 'timeouts' ? 'outbound calls without an explicit timeout' : goal === 'docstrings' ? 'public functions without a docstring' : 'bare except / swallowed errors'} and list them.`,
  );
  const findings: string[] = [];
  for (const [i, p] of chosen.entries()) {
    w.read(
      p,
      1,
      rng.pick([60, 80, 120, 200]),
      i === 0 ? `I'll go through the modules one by one, starting with \`${p}\`.` : rng.pick(['', '', `Next: \`${p}\`.`]),
    );
    if (rng.chance(0.4))
      findings.push(
        `- \`${p}\`: ${rng.pick(['line', 'around line'])} ${rng.int(12, 180)} — ${goal === 'audit logging' ? 'balance update without audit entry' : goal === 'timeouts' ? 'HTTP call without timeout' : goal === 'docstrings' ? 'public function lacks a docstring' : 'exception swallowed'}`,
      );
  }
  w.say(`Findings (${findings.length} of ${chosen.length} modules):\n${findings.join('\n') || '- none'}`);
  b.user('Thanks. Now fix the original issue.');
  const failures = explore(w, 'short');
  void failures;
  fixAndFinish(w);
  b.outcome({ resolved: true });
  b.note(`${chosen.length} different files read one after another (a survey), then the fix; no file read twice with the same range`);
  return b.build();
}

const BATCH_EDITS: Record<Repo['language'], readonly { old: string; text: string; why: string; grep: string }[]> = {
  python: [
    {
      old: 'now = datetime.utcnow()',
      text: 'now = datetime.now(timezone.utc)',
      why: 'datetime.utcnow() is deprecated since Python 3.12',
      grep: 'datetime.utcnow()',
    },
    {
      old: 'from payments.amounts import parse_amount',
      text: 'from payments.money import parse_amount',
      why: 'amounts.py was renamed to money.py',
      grep: 'from payments.amounts import',
    },
    { old: 'logger = logging.getLogger("payments")', text: 'logger = logging.getLogger(__name__)', why: 'per-module loggers', grep: 'getLogger("payments")' },
  ],
  typescript: [
    {
      old: "import { roundTo } from '../currency/round';",
      text: "import { roundTo } from '@ledger/currency';",
      why: 'the currency helpers moved to a workspace package',
      grep: "from '../currency/round'",
    },
    {
      old: 'const res = await fetch(url);',
      text: 'const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });',
      why: 'every fetch needs a timeout',
      grep: 'await fetch(url)',
    },
  ],
  go: [
    {
      old: '\tctx := context.TODO()',
      text: '\tctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)\n\tdefer cancel()',
      why: 'handlers must honour request deadlines',
      grep: 'context.TODO()',
    },
    { old: '\t"io/ioutil"', text: '\t"io"', why: 'io/ioutil is deprecated', grep: '"io/ioutil"' },
  ],
  rust: [
    { old: 'use failure::Error;', text: 'use anyhow::Error;', why: 'the failure crate is unmaintained', grep: 'use failure::' },
    { old: '.expect("lock poisoned")', text: '.unwrap_or_else(PoisonError::into_inner)', why: 'recover from poisoned locks', grep: 'lock poisoned' },
  ],
};

/** The same edit applied across many files. */
export function codingBatchEdit(ctx: ScenarioContext): CorpusTrajectory {
  let edit: (typeof BATCH_EDITS)[Repo['language']][number] | undefined;
  const w = startCoding(ctx, {
    variant: 'same edit in many files',
    task: (repo) => {
      edit = ctx.rng.pick(BATCH_EDITS[repo.language]);
      return `In ${repo.name}: ${edit.why}. Replace \`${edit.old.trim()}\` with \`${edit.text.trim().split('\n')[0]}\` everywhere and make sure the tests still pass.`;
    },
  });
  const { b, rng } = w;
  if (edit === undefined) throw new Error('no batch edit chosen');
  const paths = [...new Set([...extraPaths(w, rng.int(6, 12)), ...w.repo.files.filter((f) => !/test/.test(f.path)).map((f) => f.path)])].slice(
    0,
    rng.int(7, 16),
  );
  w.shell(
    `grep -rln '${edit.grep}' .`,
    paths.map((p) => `./${p}`).join('\n'),
    w.style === 'swe' ? `Let's find every file that uses \`${edit.grep}\`.` : rng.pick(['', 'Let me find all occurrences first.']),
  );
  for (const [i, p] of paths.entries()) {
    const line = rng.int(3, 140);
    w.replaceText(
      p,
      edit.old,
      edit.text,
      line,
      [
        rng.pick(['', '    """Run the job."""', '\tdefer span.End()', '  const url = buildUrl(base, params);', '    let mut guard = self.inner.lock()']),
        rng.pick(['', '    try:', '\tif err != nil {', '  if (!res.ok) throw new HttpError(res.status);', '    guard.flush()?;']),
      ],
      i === 0 ? rng.pick(['', `Starting with \`${p}\`.`]) : rng.pick(['', '', '']),
    );
  }
  w.shell(`grep -rn '${edit.grep}' . || echo "no matches"`, 'no matches', rng.pick(['', 'Let me verify nothing is left.']));
  const failures = issueFailures(w.issue);
  w.tests(failures.slice(0, 0), rng.pick(['', 'Now the tests.']));
  w.say(`Replaced \`${edit.grep}\` in ${paths.length} files; the test suite passes.`);
  b.outcome({ resolved: true });
  b.note(`the same replacement applied to ${paths.length} different files (same old/new text, different paths), then verified`);
  return b.build();
}

function ciStatus(runId: number, phase: number, phases: number, seconds: number, failedJob: boolean): string {
  const jobs = ['lint', 'typecheck', 'test (3.11)', 'test (3.12)', 'build'];
  const done = Math.min(jobs.length, Math.round((phase / Math.max(1, phases - 1)) * jobs.length));
  const status = phase === 0 ? 'queued' : phase >= phases - 1 ? 'completed' : 'in_progress';
  const conclusion = status === 'completed' ? (failedJob ? 'failure' : 'success') : '';
  const jobList = jobs.map((j, i) => {
    const st = status === 'queued' ? 'queued' : i < done ? 'completed' : i === done ? 'in_progress' : 'queued';
    const c = st === 'completed' ? (failedJob && i === jobs.length - 2 ? 'failure' : 'success') : '';
    return `{"name":"${j}","status":"${st}","conclusion":"${c}","startedAt":"${st === 'queued' ? '' : `2024-06-12T10:${String(2 + i).padStart(2, '0')}:${String((seconds + i * 7) % 60).padStart(2, '0')}Z`}"}`;
  });
  return `{"conclusion":"${conclusion}","databaseId":${runId},"jobs":[${jobList.join(',')}],"status":"${status}","updatedAt":"2024-06-12T10:${String(Math.floor(seconds / 60) % 60).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}Z"}`;
}

/** Polling CI until it finishes, with waits in between or across user turns. */
export function codingPolling(ctx: ScenarioContext): CorpusTrajectory {
  const acrossTurns = ctx.index % 3 === 2;
  const w = startCoding(ctx, {
    variant: acrossTurns ? 'CI re-checked between user turns' : 'CI polled with sleeps',
    style: cycle(['claude', 'generic', 'openhands', 'claude', 'swe'] as const, ctx.index),
  });
  const { b, rng } = w;
  explore(w, 'short');
  fixAndFinishNoEnd(w);
  const branch = `fix/${w.issue.symbol.toLowerCase()}`;
  w.shell(`git push -u origin ${branch}`, `To github.com:${w.repo.name}.git\n * [new branch]      ${branch} -> ${branch}`, '');
  const runId = rng.int(9000000, 9900000);
  w.shell(`gh run list --branch ${branch} --limit 1 --json databaseId,status`, `[{"databaseId":${runId},"status":"queued"}]`, 'Let me watch the CI run.');
  const phases = rng.int(3, 6);
  const failedJob = rng.chance(0.3);
  let seconds = rng.int(0, 3000);
  const polls: number[] = [];
  for (let p = 0; p < phases; p++) {
    if (p > 0) {
      if (acrossTurns) {
        w.say(rng.pick(['CI is still running; I will check again when you ask.', 'The run is in progress. Tell me when to look again.']));
        b.user(rng.pick(['can you check CI again?', 'how is the build doing now?', 'check again please', 'is it done yet?']));
      } else {
        w.shell(`sleep ${rng.pick([30, 45, 60])}`, '', rng.pick(['', 'Waiting before polling again.']));
      }
      seconds += rng.int(40, 240);
    }
    polls.push(w.shell(`gh run view ${runId} --json status,conclusion,jobs,databaseId,updatedAt`, ciStatus(runId, p, phases, seconds, failedJob), ''));
  }
  if (failedJob) {
    w.shell(
      `gh run view ${runId} --log-failed | tail -n 30`,
      `test (3.12)\tRun tests\t2024-06-12T10:14:02Z FAILED tests/test_integration.py::test_sandbox_roundtrip - TimeoutError: sandbox did not answer in 30s\ntest (3.12)\tRun tests\t2024-06-12T10:14:02Z 1 failed, ${w.issue.total - 1} passed in 41.2s`,
      'One job failed. Let me look at why.',
    );
    w.shell(
      `gh run rerun ${runId} --failed`,
      `✓ Requested rerun of failed jobs in run ${runId}`,
      'This is the sandbox integration test timing out, unrelated to the change. Re-running the failed job.',
    );
    seconds += rng.int(60, 200);
    w.shell('sleep 60', '', '');
    polls.push(w.shell(`gh run view ${runId} --json status,conclusion,jobs,databaseId,updatedAt`, ciStatus(runId, phases - 1, phases, seconds, false), ''));
  }
  w.say(`CI passed on ${branch} (run ${runId}).`);
  b.outcome({ resolved: true });
  b.note(
    `CI status polled ${polls.length}x with the same arguments (steps ${polls.join(', ')}), the status changing between polls (queued → in_progress → completed)${acrossTurns ? ', each re-check asked for by the user' : ', sleeps in between'}`,
  );
  return b.build();
}

function fixAndFinishNoEnd(w: Workbench): void {
  w.edit(w.issue.file, w.bugLine, w.issue.fixLine, '');
  w.tests([], '');
  w.shell(
    `git checkout -b fix/${w.issue.symbol.toLowerCase()} && git commit -qam "Fix ${w.issue.symbol}"`,
    `Switched to a new branch 'fix/${w.issue.symbol.toLowerCase()}'`,
    '',
  );
}

/** Installs or API calls retried after transient errors, then succeeding. */
export function codingBoundedRetry(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'transient errors then success' });
  const { b, rng } = w;
  const lang = w.repo.language;
  const failuresBefore = rng.int(1, 3);
  const transient = {
    python: [
      `WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'ReadTimeoutError("HTTPSConnectionPool(host='pypi.org', port=443): Read timed out. (read timeout=15)")': /simple/pydantic/\nERROR: Could not install packages due to an OSError: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out.`,
      'ERROR: HTTP error 503 while getting https://files.pythonhosted.org/packages/…/pydantic_core-2.18.4-cp312-cp312-manylinux_2_17_x86_64.whl\nERROR: 503 Server Error: Service Unavailable for url',
    ],
    typescript: [
      'npm ERR! code E503\nnpm ERR! 503 Service Unavailable - GET https://registry.npmjs.org/vitest - Service Unavailable',
      'npm ERR! code ETIMEDOUT\nnpm ERR! errno ETIMEDOUT\nnpm ERR! network request to https://registry.npmjs.org/esbuild failed, reason: connect ETIMEDOUT 104.16.3.35:443',
    ],
    go: [
      'go: github.com/redis/go-redis/v9@v9.5.1: Get "https://proxy.golang.org/github.com/redis/go-redis/v9/@v/v9.5.1.zip": dial tcp 142.250.74.113:443: i/o timeout',
      'go: github.com/stretchr/testify@v1.9.0: reading https://proxy.golang.org/github.com/stretchr/testify/@v/v1.9.0.mod: 502 Bad Gateway',
    ],
    rust: [
      'error: failed to download from `https://static.crates.io/crates/tokio/1.38.0/download`\n\nCaused by:\n  [28] Timeout was reached (Operation too slow. Less than 10 bytes/sec transferred the last 30 seconds)',
      'warning: spurious network error (3 tries remaining): [55] Failed sending data to the peer\nerror: failed to download `serde v1.0.203`\n\nCaused by:\n  failed to get 200 response from `https://static.crates.io/crates/serde/1.0.203/download`, got 503',
    ],
  }[lang];
  const retries: number[] = [];
  for (let k = 0; k < failuresBefore; k++) {
    retries.push(
      w.shell(
        w.repo.installCommand,
        rng.pick(transient),
        k === 0
          ? 'Installing dependencies first.'
          : rng.pick(['A network error; retrying.', 'Transient registry error. Trying again.', `The registry returned an error; waiting a bit and retrying.`]),
        true,
      ),
    );
    if (k > 0 && rng.chance(0.4)) w.shell('sleep 20', '', null);
  }
  retries.push(
    w.shell(
      w.repo.installCommand,
      {
        python: 'Successfully installed payments-api-0.9.2 pydantic-2.7.4 pydantic-core-2.18.4 pytest-8.2.2',
        typescript:
          'added 412 packages, and audited 413 packages in 14s\n\n87 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities',
        go: 'go: downloading github.com/redis/go-redis/v9 v9.5.1\ngo: downloading github.com/stretchr/testify v1.9.0',
        rust: '    Updating crates.io index\n  Downloaded tokio v1.38.0\n  Downloaded serde v1.0.203\n  Downloaded 41 crates (5.2 MB) in 3.10s',
      }[lang],
      rng.pick(['Retrying once more.', '', 'One more try.']),
    ),
  );
  explore(w, 'short');
  if (rng.chance(0.5)) {
    w.edit(w.issue.file, w.bugLine, w.issue.fixLine, '');
    w.tests([], '');
    w.shell(
      `gh pr create --fill`,
      `HTTP 429: API rate limit exceeded for installation ID ${rng.int(1000000, 9999999)}. (https://api.github.com/graphql)\nRetry-After: ${rng.pick([30, 60])}`,
      'Opening the pull request.',
      true,
    );
    w.shell(`sleep ${rng.pick([30, 60])}`, '', 'Rate limited; waiting as the Retry-After header asks.');
    w.shell(`gh pr create --fill`, `https://github.com/${w.repo.name}/pull/${rng.int(100, 3000)}`, '');
    w.say('Fixed and opened a pull request.');
  } else {
    fixAndFinish(w);
  }
  b.outcome({ resolved: true });
  b.note(
    `${failuresBefore} transient network failure(s) of \`${w.repo.installCommand}\` (timeouts/503) then success at step ${retries[retries.length - 1]}; bounded retries, not a loop`,
  );
  return b.build();
}

function collateral(w: Workbench): Failure {
  const tests = w.repo.files.filter((f) => /test/.test(f.path) && f.path !== w.issue.testFile).flatMap((f) => f.symbols.map((s) => ({ f: f.path, s })));
  const t = tests.length > 0 ? w.rng.pick(tests) : { f: w.issue.testFile, s: 'test_regression' };
  return {
    name: w.repo.language === 'python' && !w.repo.testCommand.includes('manage') ? `${t.f}::${t.s}` : t.s,
    message: w.rng.pick([
      'AssertionError: snapshot mismatch: 1 line differs',
      `AssertionError: expected the old behaviour of ${w.issue.symbol}`,
      'assertion failed: expected 2 records, got 3',
    ]),
  };
}

/** Edit and test repeated; the code changes each time and the failing tests move. */
export function codingEditTestCycle(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'edit-test cycle' });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, rng.pick(['short', 'normal']));
  const other = collateral(w);
  type Attempt = { apply: () => void; failures: Failure[]; label: string };
  const attempts: Attempt[] = [
    {
      label: 'first guess',
      apply: () => w.edit(issue.file, w.bugLine, issue.wrongFix, rng.pick(['', 'Let me try the obvious fix.'])),
      failures:
        failures.length > 1 ? failures.slice(1) : [{ name: failures[0]?.name ?? 'test', message: `${issue.assertion.split('\n')[0]} (different value)` }],
    },
    {
      label: 'syntax slip',
      apply: () => w.edit(issue.file, w.bugLine, brokenFix(issue), rng.pick(['', 'That is not quite it; a different approach.'])),
      failures: [{ name: `ERROR collecting ${issue.testFile}`, message: issue.syntaxError }],
    },
    {
      label: 'right fix, one collateral test',
      apply: () => w.edit(issue.file, w.bugLine, issue.fixLine, rng.pick(['', 'Fixing the syntax and the logic.'])),
      failures: [other],
    },
    {
      label: 'update collateral test',
      apply: () =>
        w.replaceText(
          issue.testFile,
          'expected = old_value',
          'expected = new_value',
          rng.int(20, 80),
          ['', ''],
          rng.pick(['', `The remaining failure expects the old, buggy behaviour; updating that test.`]),
        ),
      failures: [],
    },
  ];
  const chosen = rng.chance(0.5) ? attempts : [attempts[0] as Attempt, attempts[2] as Attempt, attempts[3] as Attempt];
  const runs: number[] = [];
  for (const a of chosen) {
    a.apply();
    runs.push(w.tests(a.failures, rng.pick(['', '', 'Running the tests.'])));
  }
  w.finish(`Fixed \`${issue.symbol}\` and updated one test that asserted the old behaviour; all ${issue.total} tests pass.`);
  b.outcome({ resolved: true });
  b.note(
    `the same test command run ${runs.length + 1}x (steps ${runs.join(', ')} after the first), each time after a different edit; failing tests ${[failures.length, ...chosen.map((a) => a.failures.length)].join(' → ')}`,
  );
  return b.build();
}

/** Prompt tokens rising then falling after a summary, several times. */
export function codingCompaction(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'repeated compaction', tokens: 'counted', style: cycle(['claude', 'openhands', 'generic'] as const, ctx.index) });
  const { b, rng } = w;
  const threshold = rng.int(20000, 40000);
  const files = [...w.repo.files.map((f) => f.path), ...extraPaths(w, 12)];
  let compactions = 0;
  const maybeCompact = (): void => {
    if (b.contextTokens < threshold) return;
    compactions++;
    b.compact(
      `<summary>\nTask: ${w.issue.title}. Files reviewed so far: ${rng.sample(files, 4).join(', ')}. The bug is in \`${w.issue.symbol}\` (${w.issue.file}). Next: ${rng.pick(['check callers', 'write a regression test', 'run the full suite'])}.\n</summary>`,
      { keepTokens: rng.int(1500, 5000), visible: rng.chance(0.7) },
    );
  };
  explore(w, 'long');
  const wanted = rng.int(2, 4);
  // Every chunk of every file once, file by file, with the file's recent history.
  for (const path of files) {
    if (compactions >= wanted) break;
    const n = w.lines(path).length;
    for (let start = 1; start <= n && compactions < wanted; start += 100) {
      w.read(path, start, 100, rng.pick(['', '', `Checking \`${path}\`.`]));
      maybeCompact();
    }
    if (compactions < wanted && rng.chance(0.7)) {
      const commits = Array.from(
        { length: 3 },
        () =>
          `commit ${rng.hex(40)}\nAuthor: ${rng.pick(['Dana Kim', 'Luis Ortega', 'Priya Nair', 'Tom Becker'])} <dev@example.com>\nDate:   ${rng.pick(['Mon', 'Tue', 'Wed', 'Thu', 'Fri'])} May ${rng.int(1, 28)} ${rng.int(9, 18)}:${String(rng.int(0, 59)).padStart(2, '0')}:11 2024 +0200\n\n    ${rng.pick(['Refactor', 'Fix', 'Tidy', 'Handle'])} ${rng.pick(['error paths', 'rounding', 'timeouts', 'logging'])} in ${path.split('/').pop()}\n`,
      ).join('\n');
      w.shell(
        `git log -p -n 3 -- ${path}`,
        commits,
        rng.pick(['', `Let me see how \`${path.split('/').pop()}\` changed recently.`]),
        false,
        rng.int(6000, 24000),
      );
      maybeCompact();
    }
  }
  fixAndFinish(w);
  maybeCompact();
  if (compactions < 2) throw new Error(`${ctx.id}: only ${compactions} compactions`);
  b.outcome({ resolved: true });
  b.note(
    `a long review that compacts its context ${compactions}x (prompt tokens rise to ~${Math.round(threshold / 1000)}k then fall to a summary); reads are of different files or halves`,
  );
  return b.build();
}

/** Fast growth in the first rounds from a small context while reading new files. */
export function codingEarlyGrowth(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, {
    variant: 'fast early growth',
    tokens: 'counted',
    style: cycle(['generic', 'claude', 'openhands'] as const, ctx.index),
    systemTokens: 1500 + ctx.rng.int(0, 400),
  });
  const { b, rng } = w;
  // A small starting context grows fast in relative terms while the agent loads the code it needs:
  // each round reads (in parallel) new files worth at least ~45% of the current context.
  const queue = [...w.repo.files.map((f) => f.path).filter((p) => !/test/.test(p)), ...extraPaths(w, 6)];
  const rounds = rng.int(3, 5);
  for (let round = 0; round < rounds && queue.length > 0; round++) {
    const before = b.contextTokens;
    const want = before * rng.float(0.45, 0.9);
    let first = true;
    while (queue.length > 0 && (first || b.contextTokens - before < want)) {
      const path = queue.shift() as string;
      w.read(
        path,
        1,
        w.lines(path).length,
        first ? (round === 0 ? rng.pick(['Let me load the main modules first.', 'First I need to understand the code base.']) : '') : null,
      );
      first = false;
    }
  }
  explore(w, 'short');
  fixAndFinish(w);
  b.outcome({ resolved: true });
  if (thirdDriftGrowth(b.steps, 0) === undefined) throw new Error(`${ctx.id}: no early growth run`);
  b.note('the first model calls grow ≥1.35x each while whole files are loaded from a small context; every read is a different file, growth then slows');
  return b.build();
}

const REVIEW_ISSUES = [
  'missing input validation',
  'float used for money',
  'no timeout on outbound call',
  'broad exception swallowed',
  'N+1 query in loop',
  'mutable default argument',
  'unbounded retry',
  'secret read at import time',
];

/** Markdown reports with repeated structure but different content. */
export function codingStructuredText(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'per-module review tables', task: undefined });
  const { b, rng } = w;
  b.user('Review each source module and give me, per module, a table of problems (function, lines, problem, severity) and a suggested patch.');
  const files = w.repo.files.filter((f) => !/test/.test(f.path));
  const langTag = { python: 'python', typescript: 'ts', go: 'go', rust: 'rust' }[w.repo.language];
  // Each report goes out with the request to read the next module, as one model turn.
  let pending = '';
  for (const f of files) {
    w.read(f.path, 1, f.lines, pending);
    const rows = rng
      .sample(f.symbols.length > 0 ? f.symbols : ['main'], Math.min(3, Math.max(1, f.symbols.length)))
      .map((s) => `| \`${s}\` | ${rng.int(5, 60)}–${rng.int(61, 140)} | ${rng.pick(REVIEW_ISSUES)} | ${rng.pick(['low', 'medium', 'high'])} |`);
    const sample =
      fileLines(w.repo, f.path)
        .find((l) => l.trim().length > 20)
        ?.trim() ?? '';
    pending = `### \`${f.path}\`\n\n| Function | Lines | Problem | Severity |\n|---|---|---|---|\n${rows.join('\n')}\n\n**Suggested patch:**\n\`\`\`${langTag}\n${sample}\n\`\`\`\n\n- ${rng.pick(['Add a regression test.', 'Low risk change.', 'Needs a migration note.', 'Check callers first.'])}`;
  }
  w.say(pending);
  b.user('Great, now fix the original issue.');
  explore(w, 'short');
  fixAndFinish(w);
  b.outcome({ resolved: true });
  b.note(`${files.length} model texts with the same markdown skeleton (heading, table, code block, bullet) about different modules; not repetition`);
  return b.build();
}

/** A failed call repeated once (two occurrences), then changed and succeeding. */
export function codingNearMiss(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['edit-twice', 'command-twice', 'grep-twice'] as const, ctx.index);
  const w = startCoding(ctx, { variant: kind });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, 'normal');
  let steps: number[] = [];
  if (kind === 'edit-twice') {
    const broken = brokenFix(issue);
    steps = [
      w.edit(issue.file, w.bugLine, broken, '', issue.syntaxError),
      w.edit(issue.file, w.bugLine, broken, rng.pick(['Let me try the edit again.', '']), issue.syntaxError),
    ];
    fixAndFinish(w, 'Same error. Looking closer, a parenthesis is missing; correcting it.');
  } else if (kind === 'command-twice') {
    w.edit(issue.file, w.bugLine, issue.wrongFix, '');
    steps = [w.tests(failures, ''), w.tests(failures, rng.pick(['Let me run that again to be sure it is not flaky.', '']))];
    fixAndFinish(w, 'It fails the same way twice, so it is not flaky: my change is wrong. Fixing the real cause.');
  } else {
    const term = `${issue.symbol}(`;
    steps = [w.grep(term, 'tests', ''), w.grep(term, 'tests', rng.pick(['', 'Searching again.']))];
    w.grep(issue.symbol, '', 'No callers in tests with that pattern; searching for the bare name everywhere instead.');
    fixAndFinish(w);
  }
  b.outcome({ resolved: true });
  b.note(`one call made twice with the same result (steps ${steps.join(', ')}), then changed; only two occurrences, not a loop`);
  return b.build();
}

/** An ordinary fix without repetition. */
export function codingLinear(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'straight fix' });
  explore(w, w.rng.pick(['short', 'normal', 'long']));
  fixAndFinish(w);
  w.b.outcome({ resolved: true });
  w.b.note('explore, reproduce, fix, verify; no repetition');
  return w.b.build();
}

/** A long productive session (60 to 150 steps) with realistic token totals. */
export function codingLongRun(ctx: ScenarioContext): CorpusTrajectory {
  const w = startCoding(ctx, { variant: 'long session', tokens: ctx.index % 7 === 6 ? 'null' : 'counted' });
  const { b, rng } = w;
  const issue = w.issue;
  const target = rng.int(64, 150);
  const files = [...w.repo.files.map((f) => f.path), ...extraPaths(w, 10)];
  const failures = explore(w, 'long');
  let fileCursor = ctx.index;
  const seenReads = new Set<string>();
  const readNext = (say?: string): void => {
    const path = cycle(files, fileCursor++);
    const n = w.lines(path).length;
    let start = rng.chance(0.5) ? 1 : Math.max(1, rng.int(1, n - 40));
    const count = rng.pick([60, 100, 150, 250]);
    // A productive session does not read the very same range again and again.
    while (seenReads.has(`${path}:${start}:${count}`)) start += count;
    seenReads.add(`${path}:${start}:${count}`);
    w.read(path, start, count, say ?? rng.pick(['', '', `Looking at \`${path}\`.`, `Checking how \`${path.split('/').pop()}\` handles this.`]));
  };
  const compactAt = rng.int(90000, 140000);
  const terms = rng.shuffle([issue.symbol, 'TODO', 'raise', 'Error', 'timeout', 'config', 'logger', 'retry', 'lock', 'deprecated', 'FIXME', 'assert']);
  const other = collateral(w);
  const phase = (): void => {
    const r = rng.next();
    if (r < 0.08) {
      const big = rng.pick([
        [`${w.repo.testCommand} -v 2>&1 | tee test.log`, 'collected tests\n' + failures.map((f) => `FAILED ${f.name}`).join('\n')],
        [
          `git log -p -n 10 -- ${cycle(files, fileCursor++)}`,
          `commit ${rng.hex(40)}\nAuthor: ${rng.pick(['Dana Kim', 'Luis Ortega', 'Priya Nair'])} <dev@example.com>\n\n    ${rng.pick(['Refactor', 'Fix', 'Tidy'])} ${rng.pick(['error paths', 'rounding', 'timeouts'])}`,
        ],
        [
          `cat docs/${rng.pick(['architecture', 'design', 'runbook', 'api'])}.md`,
          `# ${rng.pick(['Architecture', 'Design notes', 'Runbook', 'API reference'])}\n\n${rng.pick(['This document describes', 'Overview of', 'How we operate'])} ${w.repo.name}.`,
        ],
      ] as const);
      w.shell(big[0], big[1], rng.pick(['', 'I need the full picture here.']), false, rng.int(12000, 48000));
    } else if (r < 0.45) readNext();
    else if (r < 0.55 && terms.length > 0) w.grep(terms.pop() as string, '', rng.pick(['', 'Searching.']));
    else if (r < 0.72) {
      const path = cycle(files, fileCursor++);
      w.replaceText(
        path,
        rng.pick(['# TODO: handle errors', '// TODO: validate', 'return nil', 'pass']),
        rng.pick([
          'raise ValueError("invalid input")',
          'if (!input) throw new Error("invalid input");',
          'return fmt.Errorf("invalid input: %w", err)',
          'return Err(Error::Invalid)',
        ]),
        rng.int(10, 150),
        ['', ''],
        rng.pick(['', 'Tightening validation here too.']),
      );
      w.tests(rng.chance(0.3) ? [...failures, other] : failures, '');
    } else if (r < 0.85) {
      const path = cycle(files, fileCursor++);
      const [command, output] = rng.pick([
        [w.repo.buildCommand, ''],
        ['git status --short', ` M ${issue.file}\n M ${path}`],
        [
          'git diff --stat',
          ` ${path} | ${rng.int(2, 30)} ++--\n ${rng.int(2, 9)} files changed, ${rng.int(10, 200)} insertions(+), ${rng.int(1, 80)} deletions(-)`,
        ],
        [`wc -l ${path}`, `${w.lines(path).length} ${path}`],
      ] as const);
      w.shell(command, output, '');
    } else
      readNext(
        rng.pick([
          `Progress so far: the root cause is in \`${issue.symbol}\`; I also found ${rng.int(1, 4)} related places that need the same guard.`,
          `Next I will ${rng.pick(['add a regression test', 'check the callers', 'update the changelog', 'run the linters'])}.`,
          `Plan:\n1. ${rng.pick(['fix the core function', 'add validation'])}\n2. ${rng.pick(['update tests', 'check callers'])}\n3. ${rng.pick(['run the full suite', 'update docs'])}`,
        ]),
      );
    if (b.contextTokens > compactAt)
      b.compact(`<summary>Working on ${issue.title}. Changes so far in ${rng.int(3, 8)} files; remaining: verify callers and run the full suite.</summary>`, {
        keepTokens: rng.int(3000, 8000),
        visible: rng.chance(0.5),
      });
  };
  while (b.length < target - 5) phase();
  fixAndFinish(w);
  b.outcome({ resolved: true });
  b.note(`a long productive session of ${b.length} steps: many different reads and searches, edits each followed by a test run, then the fix`);
  return b.build();
}
