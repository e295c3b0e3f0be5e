import { clock } from '../../text.ts';
import type { Issue, Repo } from './repos.ts';

/** One failing test and its message. */
export interface Failure {
  readonly name: string;
  readonly message: string;
}

/** The failures an issue causes before it is fixed. */
export function issueFailures(issue: Issue): Failure[] {
  return issue.failing.map((name, i) => ({ name, message: i === 0 ? issue.assertion : secondaryMessage(name) }));
}

function secondaryMessage(name: string): string {
  if (name.includes('jpy')) return 'AssertionError: assert 150000 == 1500';
  if (name.includes('nested')) return 'router_test.go:97: GET /api/v1/users/: got status 404, want 200';
  if (name.includes('rounds half')) return 'AssertionError: expected 0.03 to be 0.02 // Object.is equality';
  if (name.includes('apply_coupon_once')) return "AssertionError: Decimal('72.90') != Decimal('81.00')";
  return 'AssertionError: unexpected value';
}

function shortName(name: string): string {
  return name.split('::').pop()?.split(' (')[0]?.split(' > ').pop()?.split(' › ').pop() ?? name;
}

/**
 * Output of the repository's test command. `seconds` and `at` (seconds since
 * midnight) vary between runs like real timings do.
 */
export function renderTestRun(repo: Repo, failures: readonly Failure[], total: number, seconds: number, at: number): string {
  const failed = failures.length;
  const passed = total - failed;
  const t = seconds.toFixed(2);
  switch (repo.testCommand.split(' ')[0]) {
    case 'pytest': {
      const dots = '.'.repeat(Math.max(0, passed)) + 'F'.repeat(failed);
      if (failed === 0) return `${dots.padEnd(72)}[100%]\n${passed} passed in ${t}s\n`;
      const blocks = failures.map(
        (f) =>
          `${'_'.repeat(20)} ${shortName(f.name)} ${'_'.repeat(20)}\n\n>       ${f.message.startsWith('Assertion') ? 'assert' : 'raise'} ...\nE       ${f.message}\n\n${f.name.split('::')[0]}:${40 + shortName(f.name).length}: ${f.message.split(':')[0]}`,
      );
      return `${dots.padEnd(72)}[100%]\n${'='.repeat(35)} FAILURES ${'='.repeat(35)}\n${blocks.join('\n')}\n${'='.repeat(27)} short test summary info ${'='.repeat(28)}\n${failures.map((f) => `FAILED ${f.name} - ${f.message.split('\n')[0]}`).join('\n')}\n${failed} failed, ${passed} passed in ${t}s\n`;
    }
    case 'python': {
      const lines = [
        "Creating test database for alias 'default'...",
        'System check identified no issues (0 silenced).',
        '.'.repeat(passed) + 'F'.repeat(failed),
      ];
      for (const f of failures) {
        lines.push(
          '='.repeat(70),
          `FAIL: ${f.name}`,
          '-'.repeat(70),
          'Traceback (most recent call last):',
          `  File "${repo.root}/${shortName(f.name)}.py", line ${60 + f.name.length}, in ${shortName(f.name)}`,
          `    self.assertEqual(...)`,
          f.message,
          '',
        );
      }
      lines.push(
        '-'.repeat(70),
        `Ran ${total} tests in ${(seconds + 1).toFixed(3)}s`,
        '',
        failed === 0 ? 'OK' : `FAILED (failures=${failed})`,
        "Destroying test database for alias 'default'...",
      );
      return lines.join('\n');
    }
    case 'npx': {
      if (repo.testCommand.includes('vitest')) {
        const lines = [` RUN  v1.6.0 ${repo.root}`, ''];
        for (const f of failures)
          lines.push(
            ` ❯ ${f.name.split(' > ')[0]} (${total - 20} tests | ${failed} failed) ${Math.round(seconds * 20)}ms`,
            `   × ${f.name.split(' > ').slice(1).join(' > ')}`,
            `     → ${f.message.split('\n')[0]}`,
          );
        lines.push(
          ` ✓ test/api.test.ts (11 tests) ${Math.round(seconds * 9)}ms`,
          '',
          ` Test Files  ${failed > 0 ? '1 failed | ' : ''}${failed > 0 ? 4 : 5} passed (5)`,
          `      Tests  ${failed > 0 ? `${failed} failed | ` : ''}${passed} passed (${total})`,
          `   Start at  ${clock(at)}`,
          `   Duration  ${t}s`,
          '',
        );
        return lines.join('\n');
      }
      const lines: string[] = [];
      if (failed > 0) {
        const file =
          (failures[0] as Failure).name.split(' › ')[0] === 'DateRangePicker' ? 'src/components/DateRangePicker.test.tsx' : 'src/utils/format.test.ts';
        lines.push(`FAIL ${file}`);
        for (const f of failures) lines.push(`  ● ${f.name}`, '', `    ${f.message.split('\n').join('\n    ')}`, '');
      }
      lines.push(
        'PASS src/hooks/useMetrics.test.ts',
        'PASS src/components/MetricCard.test.tsx',
        '',
        `Test Suites: ${failed > 0 ? '1 failed, ' : ''}${failed > 0 ? 5 : 6} passed, 6 total`,
        `Tests:       ${failed > 0 ? `${failed} failed, ` : ''}${passed} passed, ${total} total`,
        'Snapshots:   0 total',
        `Time:        ${seconds.toFixed(3)} s`,
        'Ran all test suites.',
      );
      return lines.join('\n');
    }
    case 'go': {
      const module = `github.com/${repo.name}`;
      const lines: string[] = [];
      for (const f of failures) lines.push(`--- FAIL: ${f.name} (0.00s)`, `    ${f.message}`);
      if (failed > 0) lines.push('FAIL', `FAIL\t${module}\t${(seconds / 50).toFixed(3)}s`);
      else lines.push(`ok  \t${module}\t${(seconds / 50).toFixed(3)}s`);
      lines.push(`ok  \t${module}/middleware\t(cached)`);
      if (failed > 0) lines.push('FAIL');
      return lines.join('\n');
    }
    case 'cargo': {
      const crate = repo.name.split('/')[1] as string;
      const lines = [
        `   Compiling ${crate} v0.4.2 (${repo.root})`,
        `    Finished test [unoptimized + debuginfo] target(s) in ${t}s`,
        `     Running unittests src/lib.rs (target/debug/deps/${crate}-5e1d0c2b7a9f3e41)`,
        '',
        `running ${total - 5} tests`,
        `test result: ok. ${total - 5} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s`,
        '',
        `     Running tests/wal_recovery.rs (target/debug/deps/wal_recovery-9c4b2a1f0e3d5c6b)`,
        '',
        'running 5 tests',
      ];
      for (const f of failures) lines.push(`test ${f.name} ... FAILED`);
      for (let i = 0; i < 5 - failed; i++) lines.push(`test case_${i + 1} ... ok`);
      if (failed > 0) {
        lines.push('', 'failures:', '');
        for (const f of failures)
          lines.push(`---- ${f.name} stdout ----`, f.message, 'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace', '');
      }
      lines.push(
        `test result: ${failed > 0 ? 'FAILED' : 'ok'}. ${5 - failed} passed; ${failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.0${Math.round(seconds)}s`,
      );
      if (failed > 0) lines.push('', 'error: test failed, to rerun pass `--test wal_recovery`');
      return lines.join('\n');
    }
    default:
      return failed === 0 ? `${total} passed` : `${failed} failed, ${passed} passed`;
  }
}

/** Output of the build/type-check command failing with `message`. */
export function renderBuildError(repo: Repo, message: string): string {
  switch (repo.language) {
    case 'typescript':
      return `${message}\n\nFound 1 error in ${message.split('(')[0]}${message.includes('(') ? `:${message.split('(')[1]?.split(',')[0]}` : ''}\n`;
    case 'go':
      return `# github.com/${repo.name}\n${message}\n`;
    case 'rust':
      return `   Compiling ${repo.name.split('/')[1]} v0.4.2 (${repo.root})\n${message}\n\nerror: could not compile \`${repo.name.split('/')[1]}\` (lib) due to 1 previous error\n`;
    case 'python':
      return `${message}\n`;
  }
}
