import type { TrajectoryBuilder } from '../../trajectory-builder.ts';
import type { Issue, Repo } from './repos.ts';
import { renderTestRun, type Failure } from './test-output.ts';
import { fileLines, grepRepo } from './virtual-files.ts';

/**
 * How a coding agent spells its tools: `claude` (Read/Grep/Edit/Bash),
 * `openhands` (str_replace_editor/execute_bash/think), `generic`
 * (read_file/search_code/edit_file/run_command) or `swe` (SWE-agent: the
 * tool is the command's first word and the arguments are the rest).
 */
export type ToolStyle = 'claude' | 'openhands' | 'generic' | 'swe';

export const TOOL_STYLES: readonly ToolStyle[] = ['claude', 'openhands', 'generic', 'swe'];

/** `undefined`: a model step with default narration; `null`: no model step (another call of the same step). */
export type Say = string | null | undefined;

/**
 * A coding agent at work in one repository: each method emits the model
 * step (unless told not to) and the tool call, with results computed from
 * the repository's deterministic files and the edits made so far.
 */
export class Workbench {
  readonly b: TrajectoryBuilder;
  readonly repo: Repo;
  readonly issue: Issue;
  readonly style: ToolStyle;
  /** Seconds since midnight on the agent's machine; advances as work goes. */
  at: number;
  readonly #edits = new Map<string, Map<number, string>>();
  #openFile: string | undefined;
  #window = 1;

  constructor(b: TrajectoryBuilder, repo: Repo, issue: Issue, style: ToolStyle) {
    this.b = b;
    this.repo = repo;
    this.issue = issue;
    this.style = style;
    this.at = b.rng.int(8 * 3600, 20 * 3600);
  }

  get rng(): TrajectoryBuilder['rng'] {
    return this.b.rng;
  }

  /** Lines of a file with this session's edits applied. */
  lines(path: string): string[] {
    const base = [...fileLines(this.repo, path)];
    for (const [line, text] of this.#edits.get(path) ?? []) base[line - 1] = text;
    return base;
  }

  /** 1-based line of the issue's buggy line. */
  get bugLine(): number {
    const index = fileLines(this.repo, this.issue.file).indexOf(this.issue.badLine);
    return index < 0 ? 1 : index + 1;
  }

  abs(path: string): string {
    return `${this.repo.root}/${path}`;
  }

  /** A model step only. */
  say(text: string, extra = 0): number {
    this.at += this.b.rng.int(3, 25);
    return this.b.model(text, extra);
  }

  #speak(say: Say, fallback: string): void {
    if (say === null) return;
    this.say(say ?? fallback);
  }

  /** Reads lines [start, start + count) of `path`. */
  read(path: string, start: number, count: number, say?: Say, options: { reopen?: boolean; args?: Record<string, unknown> | string } = {}): number {
    this.#speak(say, this.style === 'swe' ? `Let's open \`${path}\` around line ${start}.` : '');
    const all = this.lines(path);
    const from = Math.max(1, Math.min(start, all.length));
    const to = Math.min(all.length, from + count - 1);
    const slice = all.slice(from - 1, to);
    switch (this.style) {
      case 'claude':
        return this.b.call('Read', options.args ?? { file_path: this.abs(path), offset: from, limit: count }, numbered(slice, from, 'tab'));
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          options.args ?? { command: 'view', path: this.abs(path), view_range: [from, to] },
          `Here's the result of running \`cat -n\` on ${this.abs(path)}:\n${numbered(slice, from, 'tab')}`,
        );
      case 'generic':
        return this.b.call('read_file', options.args ?? { path, start_line: from, end_line: to }, numbered(slice, from, 'colon'));
      case 'swe': {
        const top = Math.max(1, from - 50);
        const wasOpen = this.#openFile === path && options.reopen !== true;
        this.#openFile = path;
        this.#window = top;
        return wasOpen
          ? this.b.call('goto', `${from}`, this.#sweWindow(path, top))
          : this.b.call('open', options.args ?? (from <= 1 ? path : `${path} ${from}`), this.#sweWindow(path, top));
      }
    }
  }

  /** SWE-agent `scroll_down`: identical arguments, the next 100 lines each time. */
  scrollDown(say?: Say): number {
    this.#speak(say, "Let's scroll down to see more of the file.");
    const path = this.#openFile ?? this.issue.file;
    this.#window = Math.min(this.#window + 100, Math.max(1, this.lines(path).length - 99));
    return this.b.call('scroll_down', '', this.#sweWindow(path, this.#window));
  }

  #sweWindow(path: string, top: number): string {
    const all = this.lines(path);
    const bottom = Math.min(all.length, top + 99);
    const above = top - 1;
    const below = all.length - bottom;
    return `[File: ${this.abs(path)} (${all.length} lines total)]\n${above > 0 ? `(${above} more lines above)\n` : ''}${numbered(all.slice(top - 1, bottom), top, 'colon')}${below > 0 ? `\n(${below} more lines below)` : ''}`;
  }

  /** Searches the repository for `term`; `flavour` varies the spelling of the same search. */
  grep(term: string, dir = '', say?: Say, flavour = 0): number {
    this.#speak(say, this.style === 'swe' ? `Let's search for \`${term}\` to find where it is used.` : '');
    const hits = grepRepo(this.repo, term, dir);
    switch (this.style) {
      case 'claude': {
        const args: Record<string, unknown> = [
          { pattern: term, path: dir || '.', output_mode: 'content', '-n': true },
          { pattern: term, path: `./${dir}`, output_mode: 'content', '-n': true },
          { path: dir || '.', pattern: term, '-n': true, output_mode: 'content' },
          { pattern: term, path: dir || '.', output_mode: 'content', '-n': true, '-i': false },
          { pattern: ` ${term}`, path: dir || '.', output_mode: 'content', '-n': true },
        ][flavour % 5] as Record<string, unknown>;
        return this.b.call('Grep', args, hits.length === 0 ? 'No matches found' : hits.map((h) => `${this.abs(h.path)}:${h.line}:${h.text}`).join('\n'));
      }
      case 'openhands':
      case 'generic': {
        const quoted = [
          `grep -rn "${term}" ${dir || '.'}`,
          `grep -rn '${term}' ${dir || '.'}`,
          `grep -rn "${term}" ${dir || '.'} --color=never`,
          `grep -nr "${term}" ./${dir}`,
          `grep -rn  "${term}"  ${dir || '.'}`,
        ][flavour % 5] as string;
        const out = hits.length === 0 ? '' : hits.map((h) => `${dir === '' ? './' : ''}${h.path}:${h.line}:${h.text}`).join('\n');
        return this.style === 'openhands'
          ? this.b.call('execute_bash', { command: quoted }, `${out}\n[The command completed with exit code ${hits.length === 0 ? 1 : 0}.]`)
          : this.b.call('run_command', { command: quoted }, out === '' ? '(no output, exit code 1)' : out);
      }
      case 'swe': {
        const args = [
          `"${term}"${dir ? ` ${dir}` : ''}`,
          `${term}${dir ? ` ${dir}` : ''}`,
          `"${term}" ${dir || '.'}`,
          `"${term}"  ${dir}`.trimEnd(),
          `'${term}'${dir ? ` ${dir}` : ''}`,
        ][flavour % 5] as string;
        const byFile = new Map<string, number>();
        for (const h of hits) byFile.set(h.path, (byFile.get(h.path) ?? 0) + 1);
        const where = dir ? this.abs(dir) : this.repo.root;
        const out =
          hits.length === 0
            ? `No matches found for "${term}" in ${where}`
            : `Found ${hits.length} matches for "${term}" in ${where}:\n${[...byFile].map(([p, n]) => `${this.abs(p)} (${n} matches)`).join('\n')}\nEnd of matches for "${term}" in ${where}`;
        return this.b.call('search_dir', args, out);
      }
    }
  }

  /** Lists a directory. */
  list(dir: string, say?: Say): number {
    this.#speak(say, this.style === 'swe' ? "Let's look at the repository layout first." : '');
    const entries = [
      ...new Set(this.repo.files.filter((f) => f.path.startsWith(dir)).map((f) => f.path.slice(dir.length).replace(/^\//, '').split('/')[0] as string)),
    ].sort();
    const text = entries.map((e) => (e.includes('.') ? e : `${e}/`)).join('\n');
    switch (this.style) {
      case 'claude':
        return this.b.call('LS', { path: this.abs(dir) }, `- ${this.abs(dir)}/\n${entries.map((e) => `  - ${e}${e.includes('.') ? '' : '/'}`).join('\n')}`);
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          { command: 'view', path: this.abs(dir) },
          `Here's the files and directories up to 2 levels deep in ${this.abs(dir)}, excluding hidden items:\n${text}`,
        );
      case 'generic':
        return this.b.call('list_dir', { path: dir || '.' }, text);
      case 'swe':
        return this.b.call('ls', dir ? `-F ${dir}` : '-F', text);
    }
  }

  /**
   * Replaces line `line` of `path` by `text`. An `error` result (a syntax
   * error, old text not found) leaves the file unchanged.
   */
  edit(path: string, line: number, text: string, say?: Say, error?: string): number {
    this.#speak(say, this.style === 'swe' ? `I'll edit line ${line} of \`${path}\`.` : '');
    const before = this.lines(path);
    const old = before[line - 1] ?? '';
    if (error === undefined) {
      const edits = this.#edits.get(path) ?? new Map<number, string>();
      edits.set(line, text);
      this.#edits.set(path, edits);
    }
    const after = this.lines(path);
    const snippet = numbered(after.slice(Math.max(0, line - 4), line + 3), Math.max(1, line - 3), 'tab');
    switch (this.style) {
      case 'claude':
        return this.b.call(
          'Edit',
          { file_path: this.abs(path), old_string: old, new_string: text },
          error ?? `The file ${this.abs(path)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet}`,
          { error: error !== undefined },
        );
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          { command: 'str_replace', path: this.abs(path), old_str: old, new_str: text },
          error ??
            `The file ${this.abs(path)} has been edited. Here's the result of running \`cat -n\` on a snippet of ${this.abs(path)}:\n${snippet}\nReview the changes and make sure they are as expected. Edit the file again if necessary.`,
          { error: error !== undefined },
        );
      case 'generic':
        return this.b.call('edit_file', { path, old_str: old.trim(), new_str: text.trim() }, error ?? `Applied 1 replacement in ${path}.`, {
          error: error !== undefined,
        });
      case 'swe': {
        this.#openFile = path;
        const top = Math.max(1, line - 50);
        const result =
          error === undefined
            ? `${this.#sweWindow(path, top)}\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`
            : `Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- ${error}\n\nThis is how your edit would have looked if applied\n-------------------------------------------------\n${numbered([...before.slice(line - 3, line - 1), text, ...before.slice(line, line + 2)], Math.max(1, line - 2), 'colon')}\n-------------------------------------------------\n\nYour changes have NOT been applied. Please fix your edit command and try again.\nYou either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.\nDO NOT re-run the same failed edit command. Running it again will lead to the same error.`;
        return this.b.call('edit', `${line}:${line}\n${text}\nend_of_edit`, result, { error: error !== undefined });
      }
    }
  }

  /**
   * An edit whose old text is not in the file (the agent misremembers the
   * line): the tool refuses and nothing changes.
   */
  editMissing(path: string, wrongOld: string, text: string, say?: Say): number {
    this.#speak(say, '');
    switch (this.style) {
      case 'claude':
        return this.b.call(
          'Edit',
          { file_path: this.abs(path), old_string: wrongOld, new_string: text },
          `<tool_use_error>String to replace not found in file.\nString: ${wrongOld}</tool_use_error>`,
          { error: true },
        );
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          { command: 'str_replace', path: this.abs(path), old_str: wrongOld, new_str: text },
          `ERROR:\nNo replacement was performed, old_str \`${wrongOld}\` did not appear verbatim in ${this.abs(path)}.`,
          { error: true },
        );
      case 'generic':
        return this.b.call(
          'edit_file',
          { path, old_str: wrongOld.trim(), new_str: text.trim() },
          `Error: old_str not found in ${path}. Make sure it matches the file exactly, including whitespace.`,
          { error: true },
        );
      case 'swe':
        return this.edit(path, this.bugLine, text, null, this.issue.syntaxError);
    }
  }

  /** An edit whose new text equals the current text: the tool reports that nothing changed. */
  editNoop(path: string, line: number, say?: Say): number {
    this.#speak(say, '');
    const current = this.lines(path)[line - 1] ?? '';
    switch (this.style) {
      case 'claude':
        return this.b.call(
          'Edit',
          { file_path: this.abs(path), old_string: current, new_string: current },
          '<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>',
          { error: true },
        );
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          { command: 'str_replace', path: this.abs(path), old_str: current, new_str: current },
          'ERROR:\nInvalid `new_str` parameter: No replacement was performed. `new_str` and `old_str` must be different.',
          { error: true },
        );
      case 'generic':
        return this.b.call(
          'edit_file',
          { path, old_str: current.trim(), new_str: current.trim() },
          'No changes made: the new text is identical to the old text.',
          { error: true },
        );
      case 'swe':
        return this.edit(path, line, current, null);
    }
  }

  /**
   * Replaces `old` by `text` at `line` of a file the fixtures do not model
   * in detail (batch edits across many files); `around` are the neighbouring
   * lines shown in the tool's snippet.
   */
  replaceText(path: string, old: string, text: string, line: number, around: readonly [string, string], say?: Say): number {
    this.#speak(say, '');
    const snippet = `${String(line - 1).padStart(6)}\t${around[0]}\n${String(line).padStart(6)}\t${text}\n${String(line + 1).padStart(6)}\t${around[1]}`;
    switch (this.style) {
      case 'claude':
        return this.b.call(
          'Edit',
          { file_path: this.abs(path), old_string: old, new_string: text },
          `The file ${this.abs(path)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet}`,
        );
      case 'openhands':
        return this.b.call(
          'str_replace_editor',
          { command: 'str_replace', path: this.abs(path), old_str: old, new_str: text },
          `The file ${this.abs(path)} has been edited. Here's the result of running \`cat -n\` on a snippet of ${this.abs(path)}:\n${snippet}\nReview the changes and make sure they are as expected. Edit the file again if necessary.`,
        );
      case 'generic':
        return this.b.call('edit_file', { path, old_str: old.trim(), new_str: text.trim() }, `Applied 1 replacement in ${path}.`);
      case 'swe':
        this.#openFile = path;
        return this.b.call(
          'edit',
          `${line}:${line}\n${text}\nend_of_edit`,
          `[File: ${this.abs(path)} (${line + this.b.rng.int(20, 200)} lines total)]\n${line - 1}:${around[0]}\n${line}:${text}\n${line + 1}:${around[1]}\nFile updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.`,
        );
    }
  }

  /** Runs a shell command with a given output. */
  shell(command: string, output: string, say?: Say, error = false, fullChars?: number): number {
    this.#speak(say, '');
    this.at += this.b.rng.int(1, 20);
    const options = { error, ...(fullChars === undefined ? {} : { fullChars }) };
    switch (this.style) {
      case 'claude':
        return this.b.call('Bash', { command, description: describe(command) }, output, options);
      case 'openhands':
        return this.b.call('execute_bash', { command }, `${output}\n[The command completed with exit code ${error ? 1 : 0}.]`, options);
      case 'generic':
        return this.b.call('run_command', { command }, output, options);
      case 'swe': {
        const space = command.indexOf(' ');
        return this.b.call(space < 0 ? command : command.slice(0, space), space < 0 ? '' : command.slice(space + 1), output, options);
      }
    }
  }

  /** Runs the test command (optionally on one target) with the given failures. */
  tests(failures: readonly Failure[], say?: Say, options: { target?: string; timing?: { seconds: number; at: number }; command?: string } = {}): number {
    const seconds = options.timing?.seconds ?? this.b.rng.float(0.8, 6);
    const at = options.timing?.at ?? this.at;
    const command = options.command ?? `${this.repo.testCommand}${options.target ? ` ${options.target}` : ''}`;
    const total = options.target ? Math.min(this.issue.total, 4 + failures.length * 3) : this.issue.total;
    return this.shell(command, renderTestRun(this.repo, failures, total, seconds, at), say, failures.length > 0);
  }

  /** The test command narrowed to the issue's test file (how agents re-run just the failing tests). */
  get targetedTestCommand(): string {
    const t = this.issue.testFile;
    switch (this.repo.testCommand.split(' ')[0]) {
      case 'go':
        return `${this.repo.testCommand.replace('./...', '')}-run '${this.issue.failing[0]?.split('/')[0] ?? 'Test'}' ./...`.replace(/\s+/g, ' ');
      case 'cargo':
        return `cargo test --test ${t.split('/').pop()?.replace('.rs', '')}`;
      case 'python':
        return `${this.repo.testCommand}.${t.split('/')[1] ?? 'cart'}`;
      default:
        return `${this.repo.testCommand} ${t}`;
    }
  }

  /** A `think` call where the style has one; otherwise a model step with the thought as text. */
  think(thought: string): number {
    if (this.style === 'openhands') {
      this.say('');
      return this.b.call('think', { thought }, 'Your thought has been logged.');
    }
    return this.say(thought);
  }

  /** Ends the run: SWE-agent submits, the others give a final answer. */
  finish(summary: string): number {
    if (this.style === 'swe') {
      this.say(summary);
      const diff = `diff --git a/${this.issue.file} b/${this.issue.file}\n--- a/${this.issue.file}\n+++ b/${this.issue.file}\n@@ -${this.bugLine},1 +${this.bugLine},1 @@\n-${this.issue.badLine}\n+${this.issue.fixLine}\n`;
      return this.b.call('submit', '', diff);
    }
    return this.say(summary);
  }
}

function numbered(lines: readonly string[], first: number, style: 'tab' | 'colon'): string {
  return lines.map((l, i) => (style === 'tab' ? `${String(first + i).padStart(6)}\t${l}` : `${first + i}:${l}`)).join('\n');
}

function describe(command: string): string {
  if (/test|pytest|jest|vitest/.test(command)) return 'Run the test suite';
  if (/grep|rg /.test(command)) return 'Search the code';
  if (/git /.test(command)) return 'Inspect git state';
  if (/sleep/.test(command)) return 'Wait before polling again';
  if (/gh run|gh pr/.test(command)) return 'Check CI status';
  if (/install|ci$|fetch|download/.test(command)) return 'Install dependencies';
  if (/cat|tail|head|less/.test(command)) return 'Show log output';
  return 'Run command';
}
