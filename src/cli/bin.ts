#!/usr/bin/env node
// The `governor` executable. Kept to syntax every Node parses, so that an
// unsupported Node gets one line saying which Node is needed instead of a
// syntax error or silence; the CLI itself is loaded only after the check.
import { isSupportedNode, unsupportedNodeMessage } from '../runtime/node-version.ts';

if (!isSupportedNode()) {
  process.stderr.write(`governor: ${unsupportedNodeMessage()}\n`);
  process.exit(1);
}
// Also before the CLI is linked: a peer of another major fails to link with a bare SyntaxError.
const { peerVersionProblem } = await import('../runtime/peer-versions.ts');
const peers = peerVersionProblem();
if (peers !== undefined) {
  process.stderr.write(`governor: ${peers}\n`);
  process.exit(2);
}
const { runCli } = await import('./main.ts');
await runCli();
