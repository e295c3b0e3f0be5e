#!/usr/bin/env node
// The `governor` executable. Kept to syntax every Node parses, so that an
// unsupported Node gets one line saying which Node is needed instead of a
// syntax error or silence; the CLI itself is loaded only after the check.
const MINIMUM = [22, 13] as const;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  process.stderr.write(`governor: Node.js ${MINIMUM.join('.')} or later is required; this is Node.js ${process.versions.node}.\n`);
  process.exit(1);
}
const { runCli } = await import('./main.ts');
await runCli();
