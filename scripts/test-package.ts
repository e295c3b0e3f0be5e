/**
 * The package as a user installs it. Packs the tarball, installs it into a
 * fresh temporary project with only `ai` and `zod` (an `ai` 7 release other
 * than the one this repository locks), and on Node 22 (the `node` npm
 * package at 22.13.0, the oldest release supported, and at its newest 22,
 * installed into temporary directories) and on this Node 24:
 * checks the tarball with publint and @arethetypeswrong/cli, imports every
 * export subpath (ESM, and the main entry from CommonJS), and
 * runs `governor --version`, `--help`, `demo`, `replay` on a corpus and
 * `run --base-url` against a ScriptedModelServer. Then adds the optional
 * peers (pg, redis, @types/pg, @ai-sdk/openai), imports the store subpaths
 * again and type-checks the README's example with `moduleResolution:
 * nodenext`.
 *
 * Usage: node scripts/test-package.ts [--corpus FILE.jsonl] [--ai VERSION] [--keep]
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { parseCommandArgs } from '../src/test-support/command-args.ts';
import { ScriptedModelServer } from '../src/testing/index.ts';

const ROOT = resolve(import.meta.dirname, '..');
const { values: flags } = parseCommandArgs('usage: npm run test:package [-- [--corpus FILE.jsonl] [--ai VERSION] [--keep]]', {
  corpus: { type: 'string', default: resolve(ROOT, '../shared/corpus/real-dev.jsonl') },
  // Not the lockfile's ai: the lowest the peer range allows, so the floor it states is the one tested.
  ai: { type: 'string', default: '7.0.163' },
  keep: { type: 'boolean', default: false },
});
const started = performance.now();

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its end; never throws for a non-zero exit (the caller checks). */
function exec(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Outcome> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr: error && typeof error.code !== 'number' ? `${stderr}${error.message}` : stderr });
      },
    );
  });
}

class CheckFailed extends Error {}

function check(condition: unknown, what: string, outcome?: Outcome): asserts condition {
  if (condition) return;
  const detail = outcome ? `\n  exit ${outcome.code}\n  stdout: ${outcome.stdout.slice(-2000)}\n  stderr: ${outcome.stderr.slice(-2000)}` : '';
  throw new CheckFailed(`${what}${detail}`);
}

function ok(line: string): void {
  process.stdout.write(`ok  ${line}  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

/** npm, run by the Node that runs this script (so the lockfile's Node 24 in CI). */
async function npm(args: readonly string[], cwd: string): Promise<Outcome> {
  const outcome = await exec('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeoutMs: 180_000 });
  check(outcome.code === 0, `npm ${args.join(' ')} failed`, outcome);
  return outcome;
}

async function packTarball(into: string): Promise<string> {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', into], ROOT);
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  const paths = packed.files.map((f) => f.path);
  const stray = paths.filter((p) => /\.test\.|test-support\/|\/examples\/|\.map$|^src\//.test(p));
  check(stray.length === 0, `the tarball contains files a user must not get: ${stray.join(', ')}`);
  for (const needed of ['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli/bin.js']) {
    check(paths.includes(needed), `the tarball lacks ${needed}`);
  }
  const dangling = paths.filter((p) => p.endsWith('.js') && readFileSync(join(ROOT, p), 'utf8').includes('sourceMappingURL'));
  check(dangling.length === 0, `shipped files point at source maps: ${dangling.slice(0, 5).join(', ')}`);
  // npm asks users to approve a package with install-time scripts, and warns on every install until they do.
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  const installScripts = ['preinstall', 'install', 'postinstall', 'prepare'].filter((name) => name in scripts);
  check(installScripts.length === 0, `the package runs scripts when installed: ${installScripts.join(', ')}`);
  ok(`npm pack: ${packed.filename}, ${paths.length} files, no tests, no maps, no install scripts`);
  const tarball = join(into, packed.filename);
  const bin = (name: string): string => join(ROOT, 'node_modules', '.bin', name);
  const publint = await exec(bin('publint'), ['run', tarball, '--strict']);
  check(publint.code === 0, 'publint found problems in the package', publint);
  // ESM-only by design (CommonJS reaches the main entry through require(esm)), so node10 and CJS-resolution are not asked for.
  const attw = await exec(bin('attw'), [tarball, '--profile', 'esm-only']);
  check(attw.code === 0, '@arethetypeswrong/cli found problems in the types', attw);
  ok('publint --strict and @arethetypeswrong/cli (esm-only) pass');
  return tarball;
}

/** The Node 22 releases tested: the oldest the README supports, and the newest. */
const NODE_22 = ['22.13.0', '22'] as const;

async function installNode22(into: string, release: string): Promise<string> {
  mkdirSync(into, { recursive: true });
  // The node package puts the binary in place from its install script.
  writeFileSync(join(into, 'package.json'), JSON.stringify({ name: 'node22', private: true, allowScripts: { node: true } }));
  await npm(['install', '--no-package-lock', `node@${release}`], into);
  const binary = join(into, 'node_modules', 'node', 'bin', 'node');
  const version = await exec(binary, ['--version']);
  check(version.code === 0 && version.stdout.startsWith(`v${release}`), `node@${release} did not install a working Node ${release}`, version);
  ok(`node@${release} from npm: ${version.stdout.trim()}`);
  return binary;
}

const SUBPATHS = ['agent-governor', 'agent-governor/testing', 'agent-governor/sqlite', 'agent-governor/proxy', 'agent-governor/mcp'] as const;
const OPTIONAL = {
  'agent-governor/postgres': 'pg',
  'agent-governor/redis': 'redis',
  'agent-governor/langchain': 'langchain',
  'agent-governor/openai-agents': '@openai/agents',
} as const;

/** Every check that needs only `npm install agent-governor ai zod`, on one Node. */
async function checkRuntime(node: string, project: string, corpus: string, baseURL: string): Promise<void> {
  const label = (await exec(node, ['--version'])).stdout.trim();
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (/^(OPENAI|ANTHROPIC|GOVERNOR)_/.test(key)) delete env[key];
  const run = (args: readonly string[], timeoutMs?: number): Promise<Outcome> => exec(node, args, { cwd: project, env, ...(timeoutMs ? { timeoutMs } : {}) });

  for (const subpath of SUBPATHS) {
    const imported = await run(['--input-type=module', '-e', `const m = await import('${subpath}'); console.log(Object.keys(m).length);`]);
    check(imported.code === 0 && Number(imported.stdout) > 0 && imported.stderr === '', `${label}: import '${subpath}'`, imported);
  }
  for (const [subpath, pkg] of Object.entries(OPTIONAL)) {
    const imported = await run([
      '--input-type=module',
      '-e',
      `import { MissingDependencyError } from 'agent-governor';
       try { await import('${subpath}'); console.log('loaded'); }
       catch (e) { console.log(MissingDependencyError.isInstance(e) ? e.packageName + ': ' + e.message : 'other: ' + e); }`,
    ]);
    check(
      imported.code === 0 && imported.stdout.startsWith(`${pkg}: `) && imported.stdout.includes(`npm install ${pkg}`),
      `${label}: import '${subpath}' without ${pkg} names the package`,
      imported,
    );
  }
  const required = await run([
    '--input-type=commonjs',
    '-e',
    `const m = require('agent-governor'); if (typeof m.ChatClient !== 'function' || typeof m.AgentBreaker !== 'function') process.exit(3);`,
  ]);
  check(required.code === 0, `${label}: require('agent-governor') from CommonJS`, required);
  // The subpaths that load no optional peer at import (no top-level await) can be required too, without a warning.
  for (const subpath of SUBPATHS) {
    const loaded = await run(['--input-type=commonjs', '-e', `console.log(Object.keys(require('${subpath}')).length);`]);
    check(loaded.code === 0 && Number(loaded.stdout) > 0 && loaded.stderr === '', `${label}: require('${subpath}') from CommonJS`, loaded);
  }
  ok(`${label}: import of every subpath (ESM), require() of the subpaths without optional peers, typed errors for missing optional peers`);

  const governor = join(project, 'node_modules', '.bin', 'governor');
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const versionOut = await exec(governor, ['--version'], { cwd: project, env });
  check(versionOut.code === 0 && versionOut.stdout === `${version}\n`, `${label}: governor --version`, versionOut);
  const help = await exec(governor, ['--help'], { cwd: project, env });
  check(help.code === 0 && /Commands:/.test(help.stdout) && /Exit codes:/.test(help.stdout), `${label}: governor --help`, help);
  const demo = await exec(governor, ['demo'], { cwd: project, env });
  check(demo.code === 0 && /Summary: with the AgentBreaker/.test(demo.stdout) && /breaker (steer|block)/.test(demo.stderr), `${label}: governor demo`, demo);
  const replay = await exec(governor, ['replay', corpus, '--json'], { cwd: project, env });
  const rows = replay.stdout.trim().split('\n').filter(Boolean);
  check(replay.code === 0 && rows.length > 0 && rows.every((r) => r.startsWith('{')), `${label}: governor replay ${corpus}`, replay);
  const dir = mkdtempSync(join(tmpdir(), 'governor-package-run-'));
  try {
    const result = await exec(governor, ['run', 'Write a greeting file', '--dir', dir, '--base-url', baseURL, '--model', 'scripted-stand-in', '--json'], {
      cwd: project,
      env,
    });
    check(result.code === 0, `${label}: governor run --base-url`, result);
    const parsed = JSON.parse(result.stdout) as { status: string; toolCalls: number };
    check(
      parsed.status === 'completed' && parsed.toolCalls === 2 && readFileSync(join(dir, 'greeting.txt'), 'utf8') === 'hello\n',
      `${label}: governor run did the task`,
      result,
    );
    const missing = await exec(governor, ['run', 'task', '--dir', dir, '--model', 'anthropic:claude-sonnet-4-5'], {
      cwd: project,
      env: { ...env, ANTHROPIC_API_KEY: 'not-a-real-key' },
    });
    check(
      missing.code === 2 && missing.stderr.includes('npm install @ai-sdk/anthropic'),
      `${label}: governor run --model anthropic:… names the package to install`,
      missing,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const proxyHelp = await exec(governor, ['proxy', '--help'], { cwd: project, env });
  check(proxyHelp.code === 0 && /--upstream URL/.test(proxyHelp.stdout), `${label}: governor proxy --help`, proxyHelp);
  // The model proxy forwards with a fetch of its own (undici's): one answer through it, whole and streamed.
  const proxied = await run([
    '--input-type=module',
    '-e',
    `import { ScriptedModelServer } from 'agent-governor/testing';
     import { startModelProxy } from 'agent-governor/proxy';
     import { AgentBreaker } from 'agent-governor';
     const server = await new ScriptedModelServer({ script: [{ text: 'Hello there.' }], onExhausted: 'repeat-last' }).start();
     const proxy = await startModelProxy({ upstream: server.baseURL, breaker: new AgentBreaker(), port: 0 });
     const ask = (stream) => fetch(proxy.url + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' },
       body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }) });
     const whole = await (await ask(false)).json();
     const streamed = await (await ask(true)).text();
     console.log(whole.choices[0].message.content + '|' + streamed.includes('Hello'));
     await proxy.close(); await server.close();`,
  ]);
  check(proxied.code === 0 && proxied.stdout.trim() === 'Hello there.|true', `${label}: startModelProxy forwards a chat request, whole and streamed`, proxied);
  // A chat route's answer as useChat reads it, built with the installed `ai`'s own UI stream helpers.
  const ui = await run([
    '--input-type=module',
    '-e',
    `import { ScriptedModelServer, scriptedModel } from 'agent-governor/testing';
     import { ChatClient } from 'agent-governor';
     const server = await new ScriptedModelServer({ script: [{ text: 'Hello there.' }] }).start();
     const response = ChatClient.builder(scriptedModel(server)).build().prompt('hi').stream().toUIMessageStreamResponse();
     const types = (await response.text()).split('\\n\\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)).type);
     console.log(response.headers.get('x-vercel-ai-ui-message-stream') + '|' + types.join(','));
     await server.close();`,
  ]);
  check(
    ui.code === 0 && /^v1\|start,start-step,text-start,(text-delta,)+text-end,finish-step,finish$/.test(ui.stdout.trim()),
    `${label}: stream().toUIMessageStreamResponse() over a real provider`,
    ui,
  );
  const mcp = await exec(governor, ['mcp', '--', 'node', '-e', '0'], { cwd: project, env });
  check(mcp.code === 2 && mcp.stderr.includes('npm install @modelcontextprotocol/sdk'), `${label}: governor mcp without the MCP SDK names it`, mcp);
  ok(
    `${label}: governor --version, --help, demo, replay (${rows.length} trajectories), run --base-url, proxy --help, a request through the model proxy, a UI message stream; a missing provider or MCP SDK is named`,
  );
}

/** The README's "Example" section, as the first TypeScript block after that heading. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Example'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  check(match?.[1], 'README.md has no ```ts block under "## Example"');
  return match[1];
}

/**
 * The AI SDK door as the README uses it, self-contained: the library's models
 * and middleware must be what the user's own `ai` takes, whichever
 * `@ai-sdk/provider` each was built on.
 */
const AI_SDK_DOOR = `import { generateText, isStepCount, streamText, tool, wrapLanguageModel } from 'ai';
import { AgentBreaker, breakerForAiSdk } from 'agent-governor';
import { ScriptedModelServer, scriptedModel } from 'agent-governor/testing';
import { z } from 'zod';

const server = new ScriptedModelServer({ script: [{ text: 'Hello.' }] });
const governed = breakerForAiSdk(new AgentBreaker(), { sessionId: 'c-42' });
const search = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => q });
await generateText({
  model: governed.model(scriptedModel(server)),
  tools: governed.tools({ search }),
  stopWhen: [isStepCount(20), governed.stopWhen],
  prompt: 'Hi',
});
streamText({ model: wrapLanguageModel({ model: scriptedModel(server), middleware: governed.middleware }), prompt: 'Hi' });
export {};
`;

async function typeCheckExample(project: string): Promise<void> {
  writeFileSync(join(project, 'example.ts'), `${readmeExample()}\nexport {};\n`);
  writeFileSync(join(project, 'ai-sdk-door.ts'), AI_SDK_DOOR);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        // As users must: ai's own declarations need @types/json-schema, which it does not install.
        skipLibCheck: true,
        types: ['node'],
        // @types/node from this repository: the user's project has its own.
        typeRoots: [join(ROOT, 'node_modules', '@types')],
      },
      files: ['example.ts', 'ai-sdk-door.ts'],
    }),
  );
  const tsc = await exec(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project });
  check(tsc.code === 0, 'the README example or the AI SDK door does not type-check against the installed package', tsc);
  ok(`README example and the AI SDK door type-check (nodenext, ai@${flags.ai})`);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'governor-package-'));
  const server = await new ScriptedModelServer({
    script: (_request, index) =>
      index % 2 === 0
        ? { toolCalls: [{ name: 'shell', arguments: { command: 'echo hello > greeting.txt && cat greeting.txt' } }] }
        : { toolCalls: [{ name: 'submit', arguments: { summary: 'wrote greeting.txt' } }] },
  }).start();
  try {
    let corpus = resolve(flags.corpus);
    if (!existsSync(corpus)) {
      corpus = join(ROOT, 'bench', 'corpus', 'coding.jsonl');
      process.stdout.write(`(no ${flags.corpus}: replaying ${corpus} instead)\n`);
    }
    const [tarball, ...node22] = await Promise.all([packTarball(work), ...NODE_22.map((release) => installNode22(join(work, `node${release}`), release))]);
    const project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'governor-user', private: true, type: 'module' }));
    await npm(['install', tarball, `ai@${flags.ai}`, 'zod@4'], project);
    ok(`npm install agent-governor ai@${flags.ai} zod@4`);
    // An app on the OpenTelemetry trace SDK's 2.x line, which pins @opentelemetry/api below 1.10, installs it too.
    const traced = join(work, 'traced');
    mkdirSync(traced);
    writeFileSync(join(traced, 'package.json'), JSON.stringify({ name: 'traced-user', private: true, type: 'module' }));
    await npm(['install', '@opentelemetry/sdk-trace-node@2'], traced);
    await npm(['install', tarball, `ai@${flags.ai}`, 'zod@4'], traced);
    ok('npm install agent-governor beside @opentelemetry/sdk-trace-node@2');
    // Peers a package manager let in outside their ranges (--legacy-peer-deps, pnpm, yarn): named, with what to install.
    const older = join(work, 'older-peers');
    mkdirSync(older);
    writeFileSync(join(older, 'package.json'), JSON.stringify({ name: 'older-peers-user', private: true, type: 'module' }));
    await npm(['install', '--legacy-peer-deps', tarball, `ai@${flags.ai}`, 'zod@4', 'redis@4', 'langchain@1'], older);
    for (const [subpath, expected] of [
      [
        'agent-governor/redis',
        /^redis: agent-governor\/redis needs the package "redis" \^6\.0\.0, and 4\.\d+\.\d+ is installed\. Run: npm install redis@\^6\.0\.0$/,
      ],
      [
        'agent-governor/langchain',
        /^@langchain\/core: agent-governor\/langchain needs the package "@langchain\/core", which is not installed\. Run: npm install @langchain\/core$/,
      ],
    ] as const) {
      const imported = await exec(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { MissingDependencyError } from 'agent-governor';
           try { await import('${subpath}'); console.log('loaded'); }
           catch (e) { console.log(MissingDependencyError.isInstance(e) ? e.packageName + ': ' + e.message : 'other: ' + e); }`,
        ],
        { cwd: older },
      );
      check(imported.code === 0 && expected.test(imported.stdout.trim()), `import '${subpath}' beside a peer it cannot use names the one to install`, imported);
    }
    ok('redis@4, and langchain without @langchain/core: the import names the package and version to install');

    for (const node of [...node22, process.execPath]) await checkRuntime(node, project, corpus, server.baseURL);

    await npm(['install', 'pg', 'redis', '@types/pg', '@ai-sdk/openai@4', 'langchain@1', '@langchain/core@1', '@openai/agents@0.20'], project);
    for (const node of [...node22, process.execPath]) {
      for (const subpath of Object.keys(OPTIONAL)) {
        const imported = await exec(node, ['--input-type=module', '-e', `await import('${subpath}');`], { cwd: project });
        check(imported.code === 0 && imported.stderr === '', `import '${subpath}' with its peer installed`, imported);
      }
    }
    ok('with their peers installed, agent-governor/postgres, /redis, /langchain and /openai-agents import on Node 22 and 24');
    await typeCheckExample(project);
  } finally {
    await server.close();
    if (flags.keep) process.stdout.write(`kept ${work}\n`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.stdout.write(`package test passed in ${((performance.now() - started) / 1000).toFixed(1)} s\n`),
  (error: unknown) => {
    process.stderr.write(
      `package test FAILED: ${error instanceof CheckFailed ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
