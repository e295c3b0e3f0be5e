/** How an MCP server run as a command ended: its exit code, or the signal that ended it. */
export interface McpServerExit {
  /** The exit code; null when a signal ended it. */
  readonly code: number | null;
  /** The signal that ended it; null when it exited. */
  readonly signal: NodeJS.Signals | null;
}

/** How a server ended, in words that follow "the MCP server" or "it": `exited with code 3`, `was ended by SIGKILL`. */
export function exitInWords(exit: McpServerExit): string {
  return exit.signal !== null ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`;
}
