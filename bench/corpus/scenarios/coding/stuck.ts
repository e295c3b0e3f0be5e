import type { CorpusTrajectory } from '../../corpus-trajectory.ts';
import { EMPTY_REPLIES } from '../multilingual.ts';
import { cycle, type ScenarioContext } from '../scenario.ts';
import { REPOS } from './repos.ts';
import { brokenFix, explore, fixAndFinish, startCoding } from './session.ts';
import { renderBuildError, type Failure } from './test-output.ts';
import { fileLines } from './virtual-files.ts';
import type { Workbench } from './workbench.ts';

const THOUGHTS = [
  'Same output as before. Maybe I misread it; the approach should be correct.',
  'Nothing new. The code looks right to me, so something else may be cached.',
  'Still the same result. I should double-check once more.',
  'The output has not changed. Let me verify again before changing anything else.',
  'Nothing changed. I will try once more to be sure it is not flaky.',
];

const RERUN_TEXT = [
  'Let me run the tests again.',
  'Running the tests once more to confirm.',
  'Let me re-run the failing tests.',
  "I'll run the suite again to double-check.",
  '',
  'Let me check whether the failure persists.',
];

/** Ends a run that never got out of its loop. */
function endStuck(w: Workbench, more: () => void): void {
  const { rng } = w.b;
  const ending = rng.int(0, 2);
  if (ending === 0) {
    more();
    w.b.outcome({ exit_status: rng.pick(['exit_cost', 'exit_context', 'max_steps']), resolved: false });
  } else if (ending === 1) {
    w.say(
      rng.pick([
        `I was not able to fix the failing test in \`${w.issue.symbol}\`. The change I made looks correct, but the test keeps failing; it may need a closer look by a maintainer.`,
        `I could not resolve the issue. The tests still fail with: ${w.issue.assertion.split('\n')[0]}`,
      ]),
    );
    w.b.outcome({ resolved: false });
  } else {
    more();
    w.b.outcome({ exit_status: 'max_steps', resolved: false });
  }
}

/** Recovers: reads more context, then applies the real fix. */
function recover(w: Workbench, say: string): void {
  const { rng } = w.b;
  w.read(w.issue.file, Math.max(1, w.bugLine - rng.int(3, 8)), rng.pick([20, 30]), say);
  fixAndFinish(w);
  w.b.outcome({ resolved: true });
}

/** The same call with identical arguments; results bring nothing new. */
export function codingSpiralIdentical(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['rerun-tests', 'reread-file', 'same-grep', 'git-diff'] as const, ctx.index);
  const recovers = ctx.index % 3 !== 2;
  const w = startCoding(ctx, { variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}` });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, rng.pick(['short', 'normal', 'long']));
  const repeats = rng.int(3, recovers ? 6 : 9);
  const interleave = w.style === 'openhands' ? rng.pick(['think', 'text', 'none']) : rng.pick(['text', 'none']);
  const noisy = kind === 'rerun-tests' && rng.chance(0.5);
  const timing = { seconds: rng.float(1, 5), at: w.at };
  const indices: number[] = [];
  let emit: (k: number) => number;
  let what: string;
  if (kind === 'rerun-tests') {
    w.edit(issue.file, w.bugLine, issue.wrongFix, w.style === 'swe' ? `I think the problem is in \`${issue.symbol}\`. Let's change line ${w.bugLine}.` : '');
    what = `\`${w.repo.testCommand}\` after an edit that does not fix the bug`;
    emit = (k) =>
      w.tests(failures, k === 0 ? '' : interleave === 'text' || interleave === 'none' ? cycle(RERUN_TEXT, k + ctx.index) : '', noisy ? {} : { timing });
  } else if (kind === 'reread-file') {
    const start = Math.max(1, w.bugLine - rng.int(2, 6));
    const count = rng.pick([15, 20, 25]);
    what = `a read of ${issue.file} lines ${start}-${start + count - 1}`;
    emit = (k) =>
      w.read(
        issue.file,
        start,
        count,
        k === 0
          ? `Let me look closely at \`${issue.symbol}\`.`
          : cycle(['Let me look at the function again.', 'Let me re-read this part.', '', 'Reading the function once more.'], k),
        { reopen: true },
      );
  } else if (kind === 'same-grep') {
    const term = `${issue.symbol}(`;
    what = `a search for "${term}"`;
    emit = (k) =>
      w.grep(
        term,
        '',
        k === 0 ? `Let me find every call of \`${issue.symbol}\`.` : cycle(['Let me search again for the callers.', '', 'Searching for usages once more.'], k),
      );
  } else {
    w.edit(issue.file, w.bugLine, issue.wrongFix, '');
    const diff = `diff --git a/${issue.file} b/${issue.file}\nindex ${rng.hex(7)}..${rng.hex(7)} 100644\n--- a/${issue.file}\n+++ b/${issue.file}\n@@ -${w.bugLine - 3},7 +${w.bugLine - 3},7 @@\n ${fileLines(
      w.repo,
      issue.file,
    )
      .slice(w.bugLine - 4, w.bugLine - 1)
      .join('\n ')}\n-${issue.badLine}\n+${issue.wrongFix}\n`;
    what = '`git diff`';
    emit = (k) => w.shell('git diff', diff, k === 0 ? 'Let me check what I changed.' : cycle(['Let me look at the diff again.', '', 'Checking the diff.'], k));
  }
  for (let k = 0; k < repeats; k++) {
    if (k > 0 && interleave === 'think') w.think(cycle(THOUGHTS, k + ctx.index));
    indices.push(emit(k));
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  if (recovers) {
    recover(w, 'I keep getting the same output. Instead of repeating this, let me re-read the code around the bug and think about what is actually wrong.');
  } else {
    endStuck(w, () => {
      for (let k = 0; k < rng.int(1, 2); k++) indices.push(emit(repeats + k));
    });
  }
  b.note(
    `${what} repeated ${indices.length}x (steps ${indices.join(', ')}) with ${noisy ? 'the same failures (only timings differ)' : 'identical results'}; only ${interleave === 'think' ? 'think() calls' : interleave === 'text' ? 'narration' : 'empty model turns'} in between${recovers ? '; recovers afterwards' : ''}`,
  );
  return b.build();
}

/** The same call with slightly varied spellings of the same arguments. */
export function codingSpiralVaried(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['grep-variants', 'test-command-variants', 'read-arg-variants'] as const, ctx.index);
  const recovers = ctx.index % 2 === 0;
  const w = startCoding(ctx, { variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}` });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, rng.pick(['short', 'normal']));
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  let emit: (k: number) => number;
  let what: string;
  if (kind === 'grep-variants') {
    const term = rng.pick([`${issue.symbol}(`, issue.badLine.trim().slice(0, 24)]);
    what = `the search for "${term}" re-spelled (quoting, ./ prefix, key order, a no-op flag)`;
    emit = (k) =>
      w.grep(
        term,
        '',
        cycle(
          [
            'Let me search for where this is used.',
            'Let me search again, maybe I missed a call site.',
            '',
            'Searching once more with a slightly different pattern.',
          ],
          k,
        ),
        k,
      );
  } else if (kind === 'test-command-variants') {
    w.edit(issue.file, w.bugLine, issue.wrongFix, '');
    const target = issue.testFile;
    const base = w.repo.testCommand;
    const commands =
      w.repo.language === 'python'
        ? [`${base} ${target}`, `python -m ${base} ${target}`, `${base}  ${target}`, `${base} ${target} -p no:cacheprovider`, `${base} ./${target}`]
        : w.repo.language === 'go'
          ? [`${base}`, `${base.replace('go test', 'go test -count=1')}`, `GOFLAGS=-mod=mod ${base}`, `${base} `, `cd ${w.repo.root} && ${base}`]
          : [`${base}`, `${base} --no-color`, `${base}  `, `cd ${w.repo.root} && ${base}`, `CI=1 ${base}`];
    what = 'the test command re-spelled (extra spaces, python -m, a no-op flag, cd prefix)';
    emit = (k) =>
      w.tests(failures, cycle(['', 'Let me run the tests again.', 'Maybe the cache is stale; running again.', '', 'Trying the tests once more.'], k), {
        target: w.repo.language === 'python' ? target : undefined,
        command: cycle(commands, k),
      });
  } else {
    const start = Math.max(1, w.bugLine - 5);
    const count = 20;
    const abs = w.abs(issue.file);
    const spellings: (Record<string, unknown> | string)[] = {
      claude: [
        { file_path: abs, offset: start, limit: count },
        { limit: count, file_path: abs, offset: start },
        { file_path: abs, offset: start, limit: count, encoding: 'utf-8' },
        { offset: start, file_path: abs, limit: count },
      ],
      openhands: [
        { command: 'view', path: abs, view_range: [start, start + count - 1] },
        { path: abs, command: 'view', view_range: [start, start + count - 1] },
        { command: 'view', view_range: [start, start + count - 1], path: abs },
      ],
      generic: [
        { path: issue.file, start_line: start, end_line: start + count - 1 },
        { path: `./${issue.file}`, start_line: start, end_line: start + count - 1 },
        { start_line: start, end_line: start + count - 1, path: issue.file },
        { path: issue.file, start_line: start, end_line: start + count - 1, encoding: 'utf-8' },
      ],
      swe: [`${issue.file} ${start}`, `"${issue.file}" ${start}`, `${issue.file}  ${start}`, `./${issue.file} ${start}`],
    }[w.style];
    what = `a read of ${issue.file} from line ${start} re-spelled (key order, ./ prefix, quotes, an extra harmless argument)`;
    emit = (k) =>
      w.read(issue.file, start, count, cycle(['Let me look at the function.', 'Let me view it again.', '', 'Let me re-check the lines around the bug.'], k), {
        reopen: true,
        args: cycle(spellings, k),
      });
  }
  for (let k = 0; k < repeats; k++) {
    indices.push(emit(k));
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  if (recovers) recover(w, 'These searches keep returning the same thing. Let me reason about the code instead.');
  else endStuck(w, () => indices.push(emit(repeats)));
  b.note(`${what}: ${indices.length} near-identical calls (steps ${indices.join(', ')}), same results${recovers ? '; recovers afterwards' : ''}`);
  return b.build();
}

/** A short cycle (period 2 to 5) whose results never change. */
export function codingShortCycle(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['compare-files', 'test-and-read', 'grep-read-test', 'fix-revert', 'survey'] as const, ctx.index);
  const recovers = ctx.index % 3 === 0;
  const w = startCoding(ctx, { variant: `${kind}; ${recovers ? 'recovers' : 'runs to the end'}` });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, 'short');
  const other = rng.pick(w.repo.files.filter((f) => f.path !== issue.file && f.path !== issue.testFile));
  const bugStart = Math.max(1, w.bugLine - 8);
  const wrongFailures: Failure[] = [
    ...failures.slice(1),
    { name: failures[0]?.name ?? issue.failing[0] ?? 'test', message: issue.assertion.replace(/\d+/, (n) => String(Number(n) + 1)) },
  ];
  const timing = { seconds: rng.float(1, 4), at: w.at };
  const periods: ((k: number) => number)[] = {
    'compare-files': [
      () => w.read(issue.file, bugStart, 30, rng.pick(['Let me compare this with the other module.', '']), { reopen: true }),
      () => w.read(other.path, 1, 30, rng.pick(['And the other one again.', '']), { reopen: true }),
    ],
    'test-and-read': [
      () => w.tests(failures, rng.pick(['', 'Let me run the test again.']), { command: w.targetedTestCommand, timing }),
      () => w.read(issue.testFile, 1, 40, rng.pick(['Let me look at the test again.', '']), { reopen: true }),
    ],
    'grep-read-test': [
      () => w.grep(`${issue.symbol}(`, '', rng.pick(['', 'Let me find the definition again.']), 2),
      () => w.read(issue.file, bugStart, 25, '', { reopen: true }),
      () => w.tests(failures, '', { command: w.targetedTestCommand, timing }),
    ],
    'fix-revert': [
      () => w.edit(issue.file, w.bugLine, issue.wrongFix, rng.pick(['Let me try changing this line.', ''])),
      () => w.tests(wrongFailures, '', { command: w.targetedTestCommand, timing }),
      () => w.edit(issue.file, w.bugLine, issue.badLine, rng.pick(['That broke something else; reverting.', ''])),
      () => w.tests(failures, '', { command: w.targetedTestCommand, timing: { ...timing, seconds: timing.seconds + 0.3 } }),
    ],
    survey: [
      () => w.list(issue.file.includes('/') ? issue.file.split('/').slice(0, -1).join('/') : (issue.testFile.split('/')[0] ?? 'src'), ''),
      () => w.grep(`${issue.symbol}(`, '', '', 2),
      () => w.read(issue.file, bugStart, 25, '', { reopen: true }),
      () => w.read(other.path, 1, 25, '', { reopen: true }),
      () => w.tests(failures, '', { command: w.targetedTestCommand, timing }),
    ],
  }[kind];
  const rounds = rng.int(3, periods.length >= 4 ? 4 : 6);
  const starts: number[] = [];
  for (let r = 0; r < rounds; r++) {
    periods.forEach((emit, i) => {
      const index = emit(r);
      if (i === 0) starts.push(index);
    });
    if (r === 2) b.stuck('tool_spiral', starts[2] as number);
  }
  if (recovers) recover(w, 'I am going around in circles. Let me focus on the one function that the failing test exercises.');
  else
    endStuck(w, () => {
      periods[0]?.(rounds);
    });
  b.note(
    `cycle of period ${periods.length} (${kind}) repeated ${rounds}x, periods starting at steps ${starts.join(', ')}; results identical each period${recovers ? '; recovers afterwards' : ''}`,
  );
  return b.build();
}

/** The same call failing with the same error again and again. */
export function codingErrorLoop(ctx: ScenarioContext): CorpusTrajectory {
  const w0 = ctx.index; // spread by language-specific variants below
  const w = startCoding(ctx, { variant: 'error-loop' });
  const { b, rng } = w;
  const issue = w.issue;
  const lang = w.repo.language;
  const options =
    w.style === 'swe'
      ? ['edit-syntax', 'edit-syntax', 'pr-validation']
      : lang === 'typescript'
        ? ['edit-not-found', 'npm-eresolve', 'build-unchanged', 'pr-validation']
        : lang === 'python'
          ? ['edit-not-found', w.repo.name.includes('shopfront') ? 'migrate-exists' : 'pip-conflict', 'pr-validation']
          : ['edit-not-found', 'build-unchanged', 'pr-validation'];
  const kind = cycle(options, w0 + rng.int(0, 1));
  const recovers = rng.chance(0.55);
  explore(w, rng.pick(['short', 'normal']));
  const repeats = rng.int(3, 7);
  const indices: number[] = [];
  let emit: (k: number) => number;
  let what: string;
  switch (kind) {
    case 'edit-syntax': {
      const broken = brokenFix(issue);
      what = `the same edit rejected with "${issue.syntaxError.split('\n')[0]}"`;
      emit = (k) =>
        w.edit(
          issue.file,
          w.bugLine,
          broken,
          k === 0
            ? `The problem is on line ${w.bugLine}. Let's fix it.`
            : cycle(
                [
                  'I will correct the syntax and try the edit again.',
                  'Let me try the edit again, making sure the parentheses are balanced.',
                  '',
                  'The edit should be correct now; retrying.',
                ],
                k,
              ),
          issue.syntaxError,
        );
      break;
    }
    case 'edit-not-found': {
      const wrongOld = issue.badLine.replace(/ {4}/, '  ').replace(/"/g, "'");
      what = 'an edit whose old text is not in the file, refused every time';
      emit = (k) =>
        w.editMissing(
          issue.file,
          wrongOld,
          issue.fixLine,
          k === 0
            ? `The bug is in \`${issue.symbol}\`. Fixing it.`
            : cycle(['The edit failed; let me try again.', 'Retrying the replacement.', '', 'Let me apply the fix again.'], k),
        );
      break;
    }
    case 'npm-eresolve': {
      const pkgs = rng.pick([
        ['react@18.3.1', 'react-dom@19.0.0'],
        ['eslint@9.12.0', 'eslint-plugin-react@7.33.2'],
        ['typescript@5.6.3', '@typescript-eslint/parser@6.21.0'],
      ]);
      what = '`npm install` failing with the same ERESOLVE conflict (log file name carries a fresh timestamp)';
      emit = (k) => {
        const stamp = `2024-0${rng.int(5, 9)}-${String(rng.int(10, 28))}T${String(rng.int(10, 23))}_${String(rng.int(10, 59))}_${String(rng.int(10, 59))}_${rng.int(100, 999)}Z`;
        return w.shell(
          cycle(['npm install', 'npm install', 'npm install --no-audit', 'npm i'], k),
          `npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\nnpm ERR!\nnpm ERR! While resolving: ${w.repo.name.split('/')[1]}@0.1.0\nnpm ERR! Found: ${pkgs[0]}\nnpm ERR! node_modules/${pkgs[0]?.split('@')[0]}\nnpm ERR!   dev ${pkgs[0]?.replace('@', '@"^').concat('"')} from the root project\nnpm ERR!\nnpm ERR! Could not resolve dependency:\nnpm ERR! peer ${pkgs[1]} from the root project\nnpm ERR!\nnpm ERR! Fix the upstream dependency conflict, or retry\nnpm ERR! this command with --force or --legacy-peer-deps\nnpm ERR! to accept an incorrect (and potentially broken) dependency resolution.\n\nnpm ERR! A complete log of this run can be found in: /root/.npm/_logs/${stamp}-debug-0.log`,
          k === 0
            ? 'Let me install the dependencies first.'
            : cycle(['Let me try installing again.', 'Retrying the install.', '', 'Maybe it was a transient problem; installing again.'], k),
          true,
        );
      };
      break;
    }
    case 'build-unchanged': {
      w.edit(issue.file, w.bugLine, brokenFix(issue), '');
      const error = renderBuildError(w.repo, issue.syntaxError);
      what = `the build failing with the same compile error; the edits in between change nothing`;
      emit = (k) => {
        if (k > 0) w.editNoop(issue.file, w.bugLine, cycle(['Let me fix the compile error.', 'Adjusting the line again.', '', 'That should fix it.'], k));
        return w.shell(w.repo.buildCommand, error, k === 0 ? 'Let me make sure it compiles.' : '', true);
      };
      break;
    }
    case 'migrate-exists': {
      what = '`python manage.py migrate` failing with the same "already exists" error';
      emit = (k) =>
        w.shell(
          cycle(['python manage.py migrate', 'python manage.py migrate', 'python manage.py migrate cart', 'python manage.py migrate'], k),
          `Operations to perform:\n  Apply all migrations: admin, auth, cart, contenttypes, orders, sessions\nRunning migrations:\n  Applying cart.0007_coupon_applied_at...Traceback (most recent call last):\n  File "/usr/local/lib/python3.12/site-packages/django/db/backends/utils.py", line 105, in _execute\n    return self.cursor.execute(sql, params)\npsycopg.errors.DuplicateColumn: column "applied_at" of relation "cart_coupon" already exists\n\nThe above exception was the direct cause of the following exception:\n...\ndjango.db.utils.ProgrammingError: column "applied_at" of relation "cart_coupon" already exists`,
          k === 0
            ? 'Let me apply the migrations so the tests can run.'
            : cycle(['The migration failed; running it again.', '', 'Let me retry the migration.'], k),
          true,
        );
      break;
    }
    case 'pip-conflict': {
      what = 'the same pip ResolutionImpossible error';
      emit = (k) =>
        w.shell(
          cycle([w.repo.installCommand, w.repo.installCommand, `${w.repo.installCommand} --no-cache-dir`], k),
          `ERROR: Cannot install pandas==2.2.2 and numpy==1.23.5 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested numpy==1.23.5\n    pandas 2.2.2 depends on numpy>=1.26.0; python_version >= "3.12"\n\nTo fix this you could try to:\n1. loosen the range of package versions you've specified\n2. remove package versions to allow pip to attempt to solve the dependency conflict\n\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts`,
          k === 0 ? 'Installing dependencies.' : cycle(['Trying the install again.', '', 'Let me retry without the cache.'], k),
          true,
        );
      break;
    }
    default: {
      fixAndFinishWithoutEnd(w);
      what = 'creating a pull request that GitHub rejects with the same 422 (request id varies)';
      emit = (k) =>
        w.shell(
          `gh api repos/${w.repo.name}/pulls -f title="Fix ${issue.symbol}" -f head=fix/${issue.symbol.toLowerCase()} -f base=main`,
          `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and fix/${issue.symbol.toLowerCase()}"}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}\ngh: Validation Failed (HTTP 422)\nx-github-request-id: ${rng.hex(4).toUpperCase()}:${rng.hex(5).toUpperCase()}:${rng.hex(7).toUpperCase()}:${rng.hex(7).toUpperCase()}:${rng.hex(8).toUpperCase()}`,
          k === 0 ? 'Now let me open a pull request.' : cycle(['The PR creation failed; trying again.', '', 'Let me retry creating the PR.'], k),
          true,
        );
    }
  }
  for (let k = 0; k < repeats; k++) {
    indices.push(emit(k));
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  if (recovers) {
    const change = 'This keeps failing with exactly the same error; repeating it will not help. Let me change approach.';
    if (kind === 'pr-validation') {
      w.shell(
        `git push -u origin fix/${issue.symbol.toLowerCase()}`,
        `To github.com:${w.repo.name}.git\n * [new branch]      fix/${issue.symbol.toLowerCase()} -> fix/${issue.symbol.toLowerCase()}\nbranch 'fix/${issue.symbol.toLowerCase()}' set up to track 'origin/fix/${issue.symbol.toLowerCase()}'.`,
        `${change} The branch was never pushed.`,
      );
      w.shell(`gh pr create --fill --head fix/${issue.symbol.toLowerCase()}`, `https://github.com/${w.repo.name}/pull/${rng.int(100, 2400)}`, '');
      w.say('The pull request is open.');
    } else {
      fixAndFinish(w, change);
    }
    b.outcome({ resolved: true });
  } else {
    endStuck(w, () => indices.push(emit(repeats)));
  }
  b.note(`${what}: ${indices.length} identical failures at steps ${indices.join(', ')}${recovers ? '; changes approach afterwards' : ''}`);
  return b.build();
}

/** The fix is made and tested, without the final answer (the loop comes after). */
function fixAndFinishWithoutEnd(w: Workbench): void {
  w.edit(w.issue.file, w.bugLine, w.issue.fixLine, '');
  w.tests([], '');
  w.shell(
    `git checkout -b fix/${w.issue.symbol.toLowerCase()} && git commit -am "Fix ${w.issue.symbol}"`,
    `Switched to a new branch 'fix/${w.issue.symbol.toLowerCase()}'\n[fix/${w.issue.symbol.toLowerCase()} ${w.b.rng.hex(7)}] Fix ${w.issue.symbol}\n 1 file changed, 1 insertion(+), 1 deletion(-)`,
    '',
  );
}

/** Prompt tokens grow ≥ 1.35× per call while the agent pulls ever more log or data without progress. */
export function codingTokenDrift(ctx: ScenarioContext): CorpusTrajectory {
  const kind = cycle(['ci-log', 'reread-all', 'db-dump'] as const, ctx.index);
  const recovers = ctx.index % 3 === 1;
  const w = startCoding(ctx, {
    variant: `${kind}; ${recovers ? 'compacts and recovers' : 'runs out of context'}`,
    tokens: 'counted',
    style: cycle(['claude', 'openhands', 'generic'] as const, ctx.index + 1),
  });
  const { b, rng } = w;
  const issue = w.issue;
  explore(w, 'long');
  // Some ordinary work so the context is no longer small.
  for (const f of rng.sample(
    w.repo.files.filter((x) => x.path !== issue.file),
    rng.int(1, 2),
  ))
    w.read(f.path, 1, rng.pick([60, 100]), '');
  const start = b.length;
  b.stuckOnDriftFrom(start);
  const rounds = rng.int(4, 7);
  const commands = {
    'ci-log': [
      'gh run view --log-failed | tail -n 400',
      'gh run view --log-failed | tail -n 1500',
      'gh run view --log-failed',
      'gh run view --log',
      'gh run view --log && cat ci-artifacts/junit.xml',
      'cat ci-artifacts/*.log',
      'cat ci-artifacts/*',
    ],
    'reread-all': [
      `cat ${issue.file}`,
      `cat ${issue.file.split('/').slice(0, -1).join('/') || '.'}/*`,
      `cat $(git ls-files '*.${issue.file.split('.').pop()}' | head -n 20)`,
      `cat $(git ls-files '*.${issue.file.split('.').pop()}')`,
      `cat $(git ls-files)`,
      'git log -p -n 30',
      'git log -p -n 80',
    ],
    'db-dump': [
      'psql -c "SELECT * FROM events ORDER BY id DESC LIMIT 200"',
      'psql -c "SELECT * FROM events ORDER BY id DESC LIMIT 1000"',
      'psql -c "SELECT * FROM events ORDER BY id DESC LIMIT 5000"',
      'psql -c "SELECT * FROM events"',
      'psql -c "SELECT * FROM events e JOIN payloads p ON p.event_id = e.id"',
      'pg_dump --data-only -t events -t payloads',
      'pg_dump --data-only',
    ],
  }[kind];
  const texts = [
    'The failure is still not clear from this. Let me look at more of the output.',
    'I still cannot see the root cause. I need more context — let me pull a larger part.',
    'Nothing conclusive yet. Let me get the complete output.',
    'This does not explain it either. Let me read everything to be thorough.',
    'Still unclear. Let me include the remaining output as well.',
    'I need to see all of it to find the problem.',
    'Let me look at everything once more in full.',
  ];
  for (let r = 0; r < rounds; r++) {
    const command = commands[Math.min(r, commands.length - 1)] as string;
    const grow = rng.float(0.42, 0.75);
    const fullTokens = Math.round(b.contextTokens * grow);
    const head = driftHead(kind, w, r);
    const fullChars = Math.round(fullTokens * 4);
    w.shell(command, head, cycle(texts, r + ctx.index), false, Math.max(fullChars, head.length));
  }
  if (recovers) {
    b.compact(
      `Summary of progress: investigating ${issue.title.toLowerCase()}. Reading complete logs and dumps did not reveal the cause. The failing test is ${issue.failing[0]}; the relevant code is \`${issue.symbol}\` in ${issue.file}.`,
      { keepTokens: rng.int(1500, 4000) },
    );
    fixAndFinish(w, `Let me stop reading logs and look at \`${issue.symbol}\` directly. The bug is on line ${w.bugLine}.`);
    b.outcome({ resolved: true });
  } else {
    w.say('');
    b.outcome({
      exit_status: 'context_window_exceeded',
      resolved: false,
      error: `prompt is too long: ${b.contextTokens} tokens > ${rng.pick([128000, 200000])} maximum`,
    });
  }
  b.note(
    `from step ${start} each round pulls a larger log/dump (${kind}) into the context, prompt growing ≥1.35x per model call, without getting closer to the cause${recovers ? '; compacts and fixes afterwards' : '; ends at the context limit'}`,
  );
  return b.build();
}

function driftHead(kind: 'ci-log' | 'reread-all' | 'db-dump', w: Workbench, round: number): string {
  const rng = w.b.rng;
  if (kind === 'ci-log') {
    const lines: string[] = [];
    for (let i = 0; i < 40; i++) {
      lines.push(
        `test\tRun tests\t2024-06-0${1 + (round % 8)}T1${i % 10}:${String(10 + (i % 50)).padStart(2, '0')}:${String(rng.int(10, 59))}.${rng.int(1000000, 9999999)}Z ${rng.pick(['PASS', 'PASS', 'PASS', 'ok', 'RUN', 'WARN deprecated', 'PASS'])} ${rng.pick(w.repo.files).path} ${rng.pick(['(0.01s)', '(cached)', '12ms', '3ms'])}`,
      );
    }
    return lines.join('\n');
  }
  if (kind === 'reread-all') {
    const files = w.repo.files.slice(0, 2 + round);
    return files.map((f) => `==> ${f.path} <==\n${fileLines(w.repo, f.path).slice(0, 25).join('\n')}`).join('\n\n');
  }
  const rows = [
    ' id    | type            | account_id | amount  | created_at',
    '-------+-----------------+------------+---------+----------------------------',
  ];
  for (let i = 0; i < 45; i++)
    rows.push(
      ` ${String(90000 - i * 3 - round).padEnd(5)} | ${rng.pick(['payment.created', 'refund.created', 'payment.failed', 'payout.paid']).padEnd(15)} | acct_${rng.hex(6)} | ${String(rng.int(100, 99999)).padStart(7)} | 2024-06-${String(rng.int(1, 28)).padStart(2, '0')} ${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')}:00+00`,
    );
  return rows.join('\n');
}

const APOLOGIES = [
  (s: string, f: string) =>
    `I apologize for the confusion. It seems my previous change did not resolve the issue. Let me take a closer look at the \`${s}\` function in \`${f}\` and try a different approach to make sure the failing test passes.`,
  (s: string, f: string) =>
    `I apologize for the oversight. It looks like the edit did not fix the problem. Let me re-examine \`${s}\` in \`${f}\` and try a different approach to make sure the failing test passes.`,
  (s: string, f: string) =>
    `You're right, I apologize for the confusion. The previous change did not resolve the issue. Let me take a closer look at the \`${s}\` function in \`${f}\` and try a different approach so that the failing test passes.`,
];

const NUDGES = [
  'Your last response did not call a tool. Use one of the available tools to make progress, or call submit if the task is complete.',
  'No tool call was found in your response. Please continue working on the task using the tools.',
];

/** The model's own text repeats the same paragraph round after round. */
export function codingTextRepetition(ctx: ScenarioContext): CorpusTrajectory {
  const nudged = ctx.index % 2 === 0;
  const recovers = ctx.index % 3 === 1;
  const w = startCoding(ctx, {
    variant: `${nudged ? 'harness nudges between' : 'consecutive model turns'}; ${recovers ? 'recovers' : 'runs to the end'}`,
    style: cycle(['claude', 'generic', 'openhands', 'swe'] as const, ctx.index),
  });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, 'short');
  w.edit(issue.file, w.bugLine, issue.wrongFix, '');
  w.tests(failures, '');
  const repeats = rng.int(3, 7);
  const template = rng.pick(APOLOGIES);
  const nudge = rng.pick(NUDGES);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0 && nudged) b.user(nudge);
    const variantText = rng.chance(0.3) ? rng.pick(APOLOGIES)(issue.symbol, issue.file) : template(issue.symbol, issue.file);
    indices.push(w.say(variantText));
    if (k === 2) b.stuck('other', indices[2] as number);
  }
  if (recovers) {
    if (nudged) b.user(nudge);
    recover(w, 'Let me actually look at the code this time.');
  } else {
    b.outcome({ exit_status: rng.pick(['max_steps', 'exit_format']), resolved: false });
  }
  b.note(
    `the same apology-and-plan paragraph repeated ${repeats}x at steps ${indices.join(', ')} without any tool call${nudged ? '; the harness nudges in between add nothing' : ''}${recovers ? '; recovers afterwards' : ''}`,
  );
  return b.build();
}

/** A test re-run loop going on across user turns that add nothing. */
export function codingLoopAcrossTurns(ctx: ScenarioContext): CorpusTrajectory {
  const recovers = ctx.index % 2 === 1;
  const w = startCoding(ctx, {
    variant: recovers ? 'user finally gives a hint' : 'runs to the end',
    chat: true,
    style: cycle(['claude', 'generic', 'openhands'] as const, ctx.index),
  });
  const { b, rng } = w;
  const issue = w.issue;
  const failures = explore(w, 'short');
  w.edit(issue.file, w.bugLine, issue.wrongFix, '');
  const repeats = rng.int(3, 6);
  const timing = { seconds: rng.float(1, 4), at: w.at };
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    if (k > 0) {
      w.say(
        cycle(
          [
            `The test still fails with \`${issue.assertion.split('\n')[0]}\`. Do you want me to keep going?`,
            `Still failing. Should I continue?`,
            `The failure persists. Let me know if I should keep trying.`,
          ],
          k,
        ),
      );
      b.user(rng.pick(EMPTY_REPLIES.en));
    }
    indices.push(
      w.tests(failures, k === 0 ? '' : rng.pick(['Running the tests again.', '', 'Let me re-run them.']), { timing: rng.chance(0.5) ? timing : undefined }),
    );
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  if (recovers) {
    w.say('The tests keep failing the same way. Do you have any idea what I am missing?');
    b.user(`Look at line ${w.bugLine} of ${issue.file} again — the original line was the problem, your change doesn't address it.`);
    fixAndFinish(w);
    b.outcome({ resolved: true });
  } else {
    w.say(`I re-ran the tests several times and they still fail with the same assertion. I'm not sure what else to try.`);
    b.outcome({ resolved: false });
  }
  b.note(
    `the same test command re-run ${repeats}x (steps ${indices.join(', ')}) without any code change; the user turns in between ("ok", "go on") add nothing${recovers ? '; a real hint from the user ends it' : ''}`,
  );
  return b.build();
}

const UI_STRINGS = [
  { lang: 'ja', text: 'ログインに失敗しました', file: 'public/locales/ja/auth.json' },
  { lang: 'zh', text: '登录失败，请重试', file: 'public/locales/zh-CN/auth.json' },
  { lang: 'ko', text: '로그인에 실패했습니다', file: 'public/locales/ko/auth.json' },
  { lang: 'ru', text: 'Не удалось войти', file: 'public/locales/ru/auth.json' },
] as const;

/** Grepping the same non-Latin UI string again and again where it is not. */
export function codingNonLatinLoop(ctx: ScenarioContext): CorpusTrajectory {
  const ui = cycle(UI_STRINGS, ctx.index);
  const dashboard = REPOS.find((r) => r.name === 'metrics/dashboard-ui') ?? (REPOS[0] as (typeof REPOS)[number]);
  const w = startCoding(ctx, {
    variant: `${ui.lang} string search`,
    style: cycle(['claude', 'openhands', 'generic'] as const, ctx.index),
    pick: () => ({ repo: dashboard, issue: dashboard.issues[0] as (typeof dashboard.issues)[number] }),
    task: `In ${dashboard.name}: the ${ui.lang} login error message "${ui.text}" is shown even when the login works. Where is it triggered?`,
  });
  const { b, rng } = w;
  const repeats = rng.int(3, 6);
  const indices: number[] = [];
  for (let k = 0; k < repeats; k++) {
    indices.push(
      w.grep(
        ui.text,
        k % 2 === 0 ? 'src' : 'src',
        cycle([`Let me search for "${ui.text}".`, 'No match; let me search again.', '', 'Searching for the message once more.'], k),
      ),
    );
    if (k === 2) b.stuck('tool_spiral', indices[2] as number);
  }
  if (ctx.index % 2 === 0) {
    w.shell(`grep -rln "${ui.text}" public/`, ui.file, 'The string may be in the translation files rather than the source.');
    w.shell(`cat ${ui.file}`, `{\n  "login": "…",\n  "loginFailed": "${ui.text}",\n  "logout": "…",\n  "sessionExpired": "…"\n}`, '');
    w.grep('auth.loginFailed', 'src', '');
    w.say(`The message comes from the key \`auth.loginFailed\` in ${ui.file}; it is rendered by the login form whenever \`error\` is truthy.`);
    b.outcome({ resolved: true });
  } else {
    w.say(`I could not find where "${ui.text}" is defined in the source code.`);
    b.outcome({ resolved: false });
  }
  b.note(`the same search for the ${ui.lang} string "${ui.text}" in src/ repeated ${repeats}x (steps ${indices.join(', ')}), always no match`);
  return b.build();
}
