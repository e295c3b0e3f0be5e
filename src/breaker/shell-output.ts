/**
 * What a shell tool's run printed, as the breaker records it: each command's
 * stdout, then its stderr. A command that exited with a code other than 0
 * fails, with `exit code N` first; one that timed out fails with `timed out`
 * first (read as an outage). Takes the Responses API's `shell_call_output`
 * entries (`exit_code`) and the OpenAI Agents SDK's (`exitCode`) alike.
 */
export function readShellOutput(output: unknown): { text: string; error: boolean } {
  const lines: string[] = [];
  let error = false;
  for (const run of Array.isArray(output) ? output : []) {
    if (typeof run !== 'object' || run === null) continue;
    const { stdout, stderr, outcome } = run as { stdout?: unknown; stderr?: unknown; outcome?: { type?: unknown; exit_code?: unknown; exitCode?: unknown } };
    const exit = outcome?.exitCode ?? outcome?.exit_code;
    if (outcome?.type === 'timeout') {
      error = true;
      lines.push('timed out');
    } else if (typeof exit === 'number' && exit !== 0) {
      error = true;
      lines.push(`exit code ${exit}`);
    }
    for (const out of [stdout, stderr]) if (typeof out === 'string' && out !== '') lines.push(out);
  }
  return { text: lines.join('\n'), error };
}
