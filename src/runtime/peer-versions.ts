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
