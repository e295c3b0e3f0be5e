import { startTrajectory, type ScenarioContext } from '../scenario.ts';
import { REPOS, type Issue, type Repo } from './repos.ts';
import { issueFailures, type Failure } from './test-output.ts';
import { TOOL_STYLES, Workbench, type ToolStyle } from './workbench.ts';

export interface CodingSetup {
  readonly variant: string;
  /**
   * Tool dialect of the agent.
   * @default spread over the four dialects by instance index
   */
  readonly style?: ToolStyle;
  /**
   * Token accounting.
   * @default half of the SWE-agent runs without counts (as their logs), 8% of the others
   */
  readonly tokens?: 'counted' | 'null';
  /**
   * Picks repository and issue.
   * @default spread over all issues by instance index
   */
  readonly pick?: (repos: readonly Repo[]) => { repo: Repo; issue: Issue };
  /**
   * Chat mode: the task comes as a conversational user turn rather than an issue text.
   * @default false
   */
  readonly chat?: boolean;
  /**
   * A task of its own instead of the issue (the first user turn and the task field).
   * @default the issue
   */
  readonly task?: string | ((repo: Repo) => string);
  /**
   * System prompt and tool schema size in tokens.
   * @default a size typical of the dialect (1.5k–4k)
   */
  readonly systemTokens?: number;
}

/** Starts a coding session: picks repository, issue and tool style, writes the task turn. */
export function startCoding(ctx: ScenarioContext, setup: CodingSetup): Workbench {
  const rng = ctx.rng;
  const all = REPOS.flatMap((repo) => repo.issues.map((issue) => ({ repo, issue })));
  const { repo, issue } = setup.pick?.(REPOS) ?? (all[(ctx.index * 5 + rng.int(0, 2)) % all.length] as { repo: Repo; issue: Issue });
  const style = setup.style ?? (TOOL_STYLES[(ctx.index + rng.int(0, 1)) % TOOL_STYLES.length] as ToolStyle);
  const tokens = setup.tokens ?? (style === 'swe' ? (rng.chance(0.5) ? 'null' : 'counted') : rng.chance(0.08) ? 'null' : 'counted');
  const profile = {
    claude: { system: [3000, 4000], reasoning: [40, 420] },
    openhands: { system: [2500, 3800], reasoning: [0, 160] },
    generic: { system: [1500, 2600], reasoning: [0, 0] },
    swe: { system: [2000, 3100], reasoning: [0, 0] },
  }[style];
  const own = typeof setup.task === 'function' ? setup.task(repo) : setup.task;
  const task =
    own ??
    (setup.chat
      ? `In ${repo.name}: ${/^[A-Z][a-z]/.test(issue.title) ? issue.title.charAt(0).toLowerCase() + issue.title.slice(1) : issue.title}. ${issue.body}`
      : `<issue>\n${issue.title}\n\n${issue.body}\n</issue>\n\nRepository: ${repo.name} (checked out at ${repo.root}). Make the minimal change that fixes the issue and keep the test suite green.`);
  const b = startTrajectory(ctx, {
    variant: `${setup.variant}; ${style}`,
    task: own ?? `${issue.title} (${repo.name})`,
    tokens,
    systemTokens: setup.systemTokens ?? rng.int(profile.system[0] as number, profile.system[1] as number),
    reasoning: [profile.reasoning[0] as number, profile.reasoning[1] as number],
  });
  b.user(task);
  return new Workbench(b, repo, issue, style);
}

/** Reads around the bug and reproduces it; returns the failures seen. */
export function explore(w: Workbench, depth: 'short' | 'normal' | 'long' = 'normal'): Failure[] {
  const { rng } = w.b;
  const issue = w.issue;
  const swe = w.style === 'swe';
  if (depth !== 'short' || rng.chance(0.5)) w.list('', swe ? undefined : rng.pick(['', "I'll start by looking at the repository structure.", '']));
  w.grep(
    issue.symbol,
    '',
    swe ? `The issue mentions \`${issue.symbol}\`. Let's find where it is defined.` : rng.pick(['', `Let me find \`${issue.symbol}\`.`]),
  );
  if (depth === 'long') {
    const others = w.repo.files.filter((f) => f.path !== issue.file && f.path !== issue.testFile);
    for (const f of rng.sample(others, rng.int(1, 3))) w.read(f.path, 1, rng.pick([80, 120, 200]), swe ? `Let's also look at \`${f.path}\` for context.` : '');
  }
  w.read(
    issue.file,
    Math.max(1, w.bugLine - rng.int(10, 40)),
    rng.pick([60, 80, 100, 120]),
    swe ? `Let's open \`${issue.file}\` where \`${issue.symbol}\` is defined.` : rng.pick(['', `Let me read \`${issue.symbol}\` in ${issue.file}.`]),
  );
  if (depth !== 'short') w.read(issue.testFile, 1, rng.pick([80, 120, 160]), swe ? `Now let's look at the tests in \`${issue.testFile}\`.` : '');
  const failures = issueFailures(issue);
  w.tests(
    failures,
    swe
      ? "Let's run the tests to reproduce the failure."
      : rng.pick(['', 'Let me reproduce the failure first.', 'Running the tests to see the current state.']),
  );
  return failures;
}

/** The fix with one closing parenthesis dropped (or one too many): what a sloppy edit submits. */
export function brokenFix(issue: Issue): string {
  const i = issue.fixLine.lastIndexOf(')');
  return i < 0 ? `${issue.fixLine})` : issue.fixLine.slice(0, i) + issue.fixLine.slice(i + 1);
}

/** Applies the correct fix, sees the suite pass, and ends the run. */
export function fixAndFinish(w: Workbench, say?: string): void {
  const { rng } = w.b;
  const issue = w.issue;
  w.edit(
    issue.file,
    w.bugLine,
    issue.fixLine,
    say ??
      (w.style === 'swe'
        ? `The problem is on line ${w.bugLine} in \`${issue.symbol}\`: ${issue.body.split('. ').pop()?.replace(/\.$/, '') ?? 'the logic is wrong'}. Let's fix it.`
        : rng.pick(['', `The bug is in \`${issue.symbol}\`; fixing it.`])),
  );
  w.tests([], w.style === 'swe' ? "Now let's run the tests again to confirm the fix." : '');
  w.finish(
    rng.pick([
      `Fixed \`${issue.symbol}\` in ${issue.file}; the full suite passes (${issue.total} tests).`,
      `The issue is resolved: ${issue.file} now ${issue.fixLine.trim().slice(0, 60)}… and all tests pass.`,
      `Done. The change is a one-line fix in \`${issue.symbol}\`; tests are green.`,
    ]),
  );
}
