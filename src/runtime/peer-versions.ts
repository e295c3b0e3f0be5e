import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The majors of the peer packages every entry point links against. A copy of
 * another major fails when the code is linked, before any of it runs, with a
 * bare "does not provide an export named …" (npm on an older Node installs
 * `ai` 6, the last major that runs there); a missing one with a stack trace
 * (a package manager that does not install peers, `--legacy-peer-deps`).
 */
const PEER_MAJORS: Readonly<Record<string, number>> = { ai: 7, zod: 4 };

/**
 * What is wrong with the peer packages installed where `from` (a directory)
 * resolves them, in one line, or undefined when they are the majors this
 * version needs (or their version cannot be read: then linking says what is wrong).
 */
export function peerVersionProblem(from: string = path.dirname(fileURLToPath(import.meta.url))): string | undefined {
  const require = createRequire(path.join(from, 'peer-versions.js'));
  for (const [name, major] of Object.entries(PEER_MAJORS)) {
    let version: unknown;
    try {
      version = (require(`${name}/package.json`) as { version?: unknown }).version;
    } catch (error) {
      // Found but unreadable (a package that does not export its package.json) is left to linking.
      if ((error as { code?: unknown }).code !== 'MODULE_NOT_FOUND') continue;
      return `agent-governor needs the package "${name}", which is not installed. Run: npm install ${name}@^${major}`;
    }
    if (typeof version !== 'string' || Number.parseInt(version, 10) === major) continue;
    return `agent-governor needs the package "${name}" ${major}, and ${version} is installed. Run: npm install ${name}@^${major}`;
  }
  return undefined;
}

/**
 * The optional peers, each with the lowest version of its range (`^` of it,
 * as package.json declares them): a subpath that loads one of another major,
 * or an older one, fails with an error naming the version to install rather
 * than a bare TypeError from an API it lacks.
 */
export const OPTIONAL_PEERS: Readonly<Record<string, string>> = {
  '@ai-sdk/anthropic': '4.0.0',
  '@ai-sdk/openai': '4.0.0',
  '@langchain/core': '1.3.4',
  '@modelcontextprotocol/sdk': '1.32.0',
  '@openai/agents': '0.20.0',
  langchain: '1.5.0',
  pg: '8.11.0',
  redis: '6.0.0',
};

/**
 * When the optional peer `name` is installed (where `from` resolves it) at a
 * version outside its range: that version and the range (`^1.32.0`);
 * undefined when it is in range, not installed (loading it says so), not one
 * of {@link OPTIONAL_PEERS}, or its version cannot be read.
 */
export function optionalPeerMismatch(
  name: string,
  from: string = path.dirname(fileURLToPath(import.meta.url)),
): { installed: string; needs: string } | undefined {
  const lowest = OPTIONAL_PEERS[name];
  if (lowest === undefined) return undefined;
  const installed = installedVersion(name, from);
  if (installed === undefined || inCaretRange(installed, lowest)) return undefined;
  return { installed, needs: `^${lowest}` };
}

/** The version of package `name` as resolved from `from`, read from its package.json even when it does not export it. */
function installedVersion(name: string, from: string): string | undefined {
  const require = createRequire(path.join(from, 'peer-versions.js'));
  for (const dir of require.resolve.paths(name) ?? []) {
    let text: string;
    try {
      text = readFileSync(path.join(dir, name, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    try {
      const version = (JSON.parse(text) as { version?: unknown }).version;
      return typeof version === 'string' ? version : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Whether `version` is in `^lowest`: the same major (the same minor for 0.x) and not below it. Pre-releases count as their release. */
function inCaretRange(version: string, lowest: string): boolean {
  const [major, minor, patch] = parts(version);
  const [lowMajor, lowMinor, lowPatch] = parts(lowest);
  if (major === undefined) return true;
  if (major !== lowMajor || (lowMajor === 0 && minor !== lowMinor)) return false;
  return minor! > lowMinor! || (minor === lowMinor && patch! >= lowPatch!);
}

function parts(version: string): [number?, number?, number?] {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  return match === null ? [] : [Number(match[1]), Number(match[2]), Number(match[3])];
}
