// The README's harness line, `jury.judge({ goal, result, workingDirectory })` with `result` from AgentLoop.run, must
// type-check in a project with `exactOptionalPropertyTypes`, which this repository's own typecheck leaves off: the
// compiler is run on that line with the option on.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The compiler's complaints about `source`, type-checked against this repository's sources with `exactOptionalPropertyTypes`. */
async function strictErrors(source: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'judge-types-'));
  try {
    writeFileSync(path.join(dir, 'user.ts'), source);
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2024',
          lib: ['es2024', 'esnext.disposable'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          exactOptionalPropertyTypes: true,
          skipLibCheck: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        },
        files: ['user.ts'],
      }),
    );
    const output = await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    // The package's own sources are compiled under the option too: only the user's file is judged.
    return output.split('\n').filter((line) => line.startsWith('user.ts'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("an AgentLoop result is a judge's input as it is, under exactOptionalPropertyTypes", async () => {
  const index = JSON.stringify(path.join(ROOT, 'src', 'index.ts'));
  const errors = await strictErrors(`import { Jury, commandJudge, type AgentLoopResult, type JudgeInput } from ${index};
declare const result: AgentLoopResult;
declare const workingDirectory: string | undefined;
export const verdict = new Jury({ judges: [commandJudge('true')], strategy: 'majority' }).judge({ goal: 'Fix the failing test', result, workingDirectory });
export const input: JudgeInput = { goal: 'Fix it', result: { status: result.status, output: result.output } };
// The compiler ran, with the option on: an optional property that does not take undefined is refused.
export const strict: { a?: string } = { a: undefined };
`);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0]!, /^user\.ts\(7,14\): error TS2375/);
});
