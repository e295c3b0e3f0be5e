// Plain syntax only: the bin imports this before anything else, on any Node.

/** The oldest Node.js the package runs on: 22.13 has `node:sqlite` without a flag and `require()` of ES modules. */
export const MINIMUM_NODE_VERSION = '22.13.0';

/** The first Node.js 23 with `node:sqlite` without a flag: 23.0 to 23.3 are below it, though above the minimum. */
const MINIMUM_NODE_23 = '23.4.0';

/** Whether `version` (default: this process's) is at least {@link MINIMUM_NODE_VERSION}, and on the 23 line at least 23.4. */
export function isSupportedNode(version: string = process.versions.node): boolean {
  return atLeast(version, version.split('.')[0] === '23' ? MINIMUM_NODE_23 : MINIMUM_NODE_VERSION);
}

function atLeast(version: string, minimum: string): boolean {
  const have = version.split('.').map(Number);
  const need = minimum.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** The one line an unsupported Node gets. */
export function unsupportedNodeMessage(version: string = process.versions.node): string {
  return `agent-governor needs Node.js ${MINIMUM_NODE_VERSION} or later (on the 23 line, ${MINIMUM_NODE_23} or later); this is Node.js ${version}.`;
}
