import { printable } from '../redaction/terminal-text.ts';
import type { CliIO } from './progress.ts';

/**
 * The operator's log of a server command (`governor proxy`, `governor mcp`):
 * one line per call on stderr, prefixed with the command, redacted and with
 * control characters escaped (lines quote session ids, tool names and errors).
 */
export function serverLog(io: CliIO, command: string): (line: string) => void {
  return (line) => {
    io.stderr.write(`governor ${command}: ${printable(line)}\n`);
  };
}
