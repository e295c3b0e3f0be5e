// biome-ignore-all lint/suspicious/noExplicitAny: the Agents SDK's ComputerTool is generic over its context and computer; any mirrors it so any computer tool fits.
import { createHash } from 'node:crypto';
import { ToolCallBlockedError } from '../breaker/breaker-errors.ts';
import { readShellOutput } from '../breaker/shell-output.ts';
import type {
  ApplyPatchTool,
  Computer,
  ComputerTool,
  Editor,
  EditorInvocationContext,
  RunContext,
  Shell,
  ShellAction,
  ShellResult,
  ShellTool,
} from '@openai/agents';

/**
 * One call of a client-run built-in tool (a shell, a patch editor, a computer), as the
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
  /**
   * What the model gets in place of a call the breaker refused. Absent for a
   * tool whose result has no room for the note (a screenshot): the refused
   * call then throws `ToolCallBlockedError`, and the note goes with the
   * model's next turn.
   */
  refused?(note: string): R;
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

/**
 * What a computer action is recorded with: the screenshot taken after it, by
 * identity (a hash of the whole image, and its length), so that the same
 * action on an unchanged screen is a repeat and on a changed one is progress.
 * The image itself never enters the breaker's state.
 */
function screenIdentity(screenshot: string): string {
  return `screenshot ${createHash('sha256').update(screenshot).digest('hex').slice(0, 24)} (${screenshot.length} characters)`;
}

/** A computer action as the breaker fingerprints it: its type, and its parameters as the API names them. */
type ComputerArgs = { readonly action: string } & Readonly<Record<string, unknown>>;

/** A computer, or an initializer that makes one per run (the SDK does not export the type). */
type ComputerConfig = ComputerTool<any, any>['computer'];

/**
 * The screenshot the SDK is handed for a call with a refused action: none, as
 * for an action that failed. The refusal is not thrown to the SDK, which would
 * log it as a failure that says nothing ("Failed to execute computer action:
 * object"); the breaker has already reported it, and the model gets its note
 * with the next turn.
 */
const NO_SCREENSHOT = '';

/** `value` in place of an action the breaker refused (`ToolCallBlockedError`); any other error is rethrown. */
function whenRefused<T>(value: T): (error: unknown) => T {
  return (error) => {
    if (ToolCallBlockedError.isInstance(error)) return value;
    throw error;
  };
}

/** A computer whose actions are judged (see {@link governComputerTool}). */
function governComputer(inner: Computer, tool: string, runJudged: RunJudged): Computer {
  // The screenshot after each context's last action, for the SDK's screenshot call that follows it.
  const taken = new WeakMap<object, string>();
  // Contexts whose current call had an action refused: its later actions do not run, as after one that failed.
  const refused = new WeakSet<object>();
  const look = (context: RunContext | undefined): Promise<string> => Promise.resolve(inner.screenshot(context));
  const judged = (context: RunContext | undefined, args: ComputerArgs, run: () => unknown): Promise<string> =>
    runJudged<string>({
      tool,
      args,
      run: async () => {
        await run();
        return look(context);
      },
      read: (screenshot) => ({ text: screenIdentity(screenshot), error: false }),
      // An image has no room for a note: a steer goes with the model's next turn.
      noted: () => undefined,
    });
  /** Runs an action judged, keeping the screenshot after it for the SDK's own screenshot call. */
  const act = async (context: RunContext | undefined, args: ComputerArgs, run: () => unknown): Promise<void> => {
    const key = context ?? computer;
    // A refused or failed action must not leave an earlier action's screenshot to be taken for its own.
    taken.delete(key);
    if (refused.has(key)) return;
    const screenshot = await judged(context, args, run).catch(whenRefused(undefined));
    if (screenshot === undefined) refused.add(key);
    else taken.set(key, screenshot);
  };
  const computer: Computer = {
    get environment() {
      return inner.environment;
    },
    get dimensions() {
      return inner.dimensions;
    },
    ...(inner.initRun === undefined ? {} : { initRun: (context?: RunContext) => inner.initRun?.(context) }),
    screenshot: (context) => {
      const key = context ?? computer;
      if (refused.delete(key)) return NO_SCREENSHOT;
      const screenshot = taken.get(key);
      taken.delete(key);
      // The SDK takes one after every call; none was taken when the call only looked (a `screenshot` action), which is judged too.
      return screenshot ?? judged(context, { action: 'screenshot' }, () => undefined).catch(whenRefused(NO_SCREENSHOT));
    },
    click: (x, y, button, context) => act(context, { action: 'click', x, y, button }, () => inner.click(x, y, button, context)),
    doubleClick: (x, y, context) => act(context, { action: 'double_click', x, y }, () => inner.doubleClick(x, y, context)),
    scroll: (x, y, scrollX, scrollY, context) =>
      act(context, { action: 'scroll', x, y, scroll_x: scrollX, scroll_y: scrollY }, () => inner.scroll(x, y, scrollX, scrollY, context)),
    type: (text, context) => act(context, { action: 'type', text }, () => inner.type(text, context)),
    wait: (context) => act(context, { action: 'wait' }, () => inner.wait(context)),
    move: (x, y, context) => act(context, { action: 'move', x, y }, () => inner.move(x, y, context)),
    keypress: (keys, context) => act(context, { action: 'keypress', keys }, () => inner.keypress(keys, context)),
    drag: (path, context) => act(context, { action: 'drag', path }, () => inner.drag(path, context)),
  };
  return computer;
}

/**
 * A computer tool whose every action (click, type, scroll, …, and a call
 * that only takes a screenshot) is judged before it runs and recorded with
 * the screenshot after it: a refused action does not run, nor does any
 * after it in the same call, and the call ends as a failing action's does
 * (the model gets no screenshot, and the breaker's note with its next turn),
 * but without the SDK logging a failure for it. Each action's screenshot is taken
 * right after it and the last one is handed to the SDK, which takes one per
 * call: a call batching several actions takes one per action. Coordinates are recorded as
 * sent: on a screen that does not change, a click a few pixels off already
 * reads as a repeat (the breaker's bar for calls that keep returning the
 * same result), and snapping them to a grid would merge neighbouring targets.
 * The computer may be given as one or as an initializer (a function, or
 * `{ create, dispose }`): each computer it creates is governed, and
 * `dispose` is handed the one `create` made.
 */
export function governComputerTool(tool: ComputerTool<any, any>, runJudged: RunJudged): ComputerTool<any, any> {
  const given: ComputerConfig = tool.computer;
  const govern = (computer: Computer) => governComputer(computer, tool.name, runJudged);
  let computer: ComputerConfig;
  if (typeof given === 'function') computer = async (args: Parameters<typeof given>[0]) => govern(await given(args));
  else if (!isComputer(given) && typeof given.create === 'function') {
    const made = new WeakMap<Computer, Computer>();
    const create = given.create;
    const dispose = given.dispose;
    computer = {
      create: async (args: Parameters<typeof create>[0]) => {
        const inner = await create(args);
        const governed = govern(inner);
        made.set(governed, inner);
        return governed;
      },
      ...(dispose === undefined
        ? {}
        : { dispose: (args: Parameters<typeof dispose>[0]) => dispose({ ...args, computer: made.get(args.computer) ?? args.computer }) }),
    };
  } else computer = govern(given as Computer);
  return { ...tool, computer };
}

const COMPUTER_METHODS = ['screenshot', 'click', 'doubleClick', 'drag', 'keypress', 'move', 'scroll', 'type', 'wait'] as const;

/** As the SDK tells a computer from an initializer (`{ create }`): by its methods. */
function isComputer(config: object): config is Computer {
  return COMPUTER_METHODS.every((method) => typeof (config as Partial<Computer>)[method] === 'function');
}
