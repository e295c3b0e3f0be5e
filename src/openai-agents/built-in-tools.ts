import { readShellOutput } from '../breaker/shell-output.ts';
import type { ApplyPatchTool, Editor, EditorInvocationContext, Shell, ShellAction, ShellResult, ShellTool } from '@openai/agents';

/**
 * One call of a client-run built-in tool (a shell, a patch editor), as the
 * governed runner judges it: before it runs, and by its result after.
 */
interface BuiltInCall<R> {
  /** The tool's name as the model calls it (`shell`, `apply_patch` unless renamed). */
  readonly tool: string;
  /** What the breaker fingerprints: the shell's commands, the patch's operation. */
  readonly args: unknown;
  run(): Promise<R>;
  /** The result as the breaker records it, and whether it is a failure. */
  read(result: R): { text: string; error: boolean };
  /** What the model gets in place of a call the breaker refused. */
  refused(note: string): R;
  /**
   * The result with the breaker's note added where the model reads it;
   * undefined when the result has no place the model reads it in (the note
   * then goes with the model's next turn).
   */
  noted(result: R, note: string): R | undefined;
}

/** Runs a built-in tool's call under the breaker (see {@link BuiltInCall}). */
export type RunJudged = <R>(call: BuiltInCall<R>) => Promise<R>;

/** A local shell tool whose runs are judged: a refused run prints the breaker's note on stderr, as the SDK's own refusal does. */
export function governShellTool(tool: ShellTool & { shell: Shell }, runJudged: RunJudged): ShellTool {
  const inner = tool.shell;
  const shell: Shell = {
    run: (action: ShellAction) =>
      runJudged<ShellResult>({
        tool: tool.name,
        args: { commands: action.commands },
        run: () => inner.run(action),
        read: (result) => readShellOutput(result.output),
        refused: (note) => ({ output: [{ stdout: '', stderr: note, outcome: { type: 'exit', exitCode: null } }] }),
        noted: (result, note) => {
          const output = [...(result.output ?? [])];
          const last = output.at(-1);
          if (last === undefined) output.push({ stdout: '', stderr: note, outcome: { type: 'exit', exitCode: 0 } });
          else output[output.length - 1] = { ...last, stderr: last.stderr ? `${last.stderr}\n\n${note}` : note };
          return { ...result, output };
        },
      }),
  };
  return { ...tool, shell };
}

/** What an editor's method resolves to: a result, or nothing (a plain success). */
type EditResult = Awaited<ReturnType<Editor['updateFile']>>;

/** A patch tool whose edits are judged: a refused edit fails with the breaker's note as its output. */
export function governApplyPatchTool(tool: ApplyPatchTool, runJudged: RunJudged): ApplyPatchTool {
  const inner = tool.editor;
  const judged = <O extends { type: string }>(operation: O, run: () => Promise<EditResult>) =>
    runJudged<EditResult>({
      tool: tool.name,
      args: operation,
      run,
      read: (result) => ({ text: result?.output ?? '', error: result?.status === 'failed' }),
      refused: (note) => ({ status: 'failed', output: note }),
      noted: (result, note) => ({ ...result, output: result?.output ? `${result.output}\n\n${note}` : note }),
    });
  const editor: Editor = {
    createFile: (operation, context?: EditorInvocationContext) => judged(operation, () => inner.createFile(operation, context)),
    updateFile: (operation, context?: EditorInvocationContext) => judged(operation, () => inner.updateFile(operation, context)),
    deleteFile: (operation, context?: EditorInvocationContext) => judged(operation, () => inner.deleteFile(operation, context)),
  };
  return { ...tool, editor };
}
