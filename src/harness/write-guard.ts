import path from 'node:path';
import { is, validateOptions, type OptionRules } from '../errors/validate-options.ts';

/** Where commands may write. All paths absolute. */
export interface WriteGuardOptions {
  /** The working directory; writes inside it are allowed. */
  workingDirectory: string;
  /** What `~`, `$HOME` and `$TMPDIR` stand for in a command. */
  homeDirectory: string;
  /** Further directories where writes are allowed. */
  writableRoots?: readonly string[];
}

const WRITE_GUARD_RULES: OptionRules<WriteGuardOptions> = {
  workingDirectory: is.string({ nonEmpty: true }),
  homeDirectory: is.string({ nonEmpty: true }),
  writableRoots: is.arrayOf(is.string({ nonEmpty: true })),
};

/** The verdict on one command. */
export type WriteCheck = { allowed: true } | { allowed: false; reason: string };

/**
 * Refuses shell commands that visibly write outside the working directory:
 * output redirection (`>`, `>>`, `&>`, …) to such a path; `rm`, `mv`, `cp`,
 * `touch`, `mkdir`, `tee`, `ln`, `chmod`, `sed -i`, `perl -i`, `dd of=`,
 * `curl -o`, `git -C`, `find -delete` and similar with such a target; and `cd`
 * (or `pushd`) out of it. It reads commands inside `$(…)`, backquotes,
 * `sh -c '…'` and `eval`, follows `cd` through a command line, and skips
 * here-document bodies.
 *
 * It is a guard against accidents, NOT a sandbox. It cannot see writes made by
 * programs (`python -c`, scripts, `make`), through variables it cannot resolve,
 * through symbolic links, or by commands it does not know; paths are compared
 * lexically. For untrusted models, run the agent in a container or VM.
 */
export function checkCommandWrites(command: string, options: WriteGuardOptions): WriteCheck {
  validateOptions('checkCommandWrites', options, WRITE_GUARD_RULES, { required: ['workingDirectory', 'homeDirectory'] });
  const guard = new Guard(options);
  const problem = guard.check(command, { cwd: options.workingDirectory, stack: [] }, 0);
  if (problem === undefined) return { allowed: true };
  return {
    allowed: false,
    reason:
      `Command refused, not run: ${problem}. Commands must write only inside the working directory ` +
      `${options.workingDirectory} and must not cd out of it; use paths inside it. ` +
      `(This is a guard against accidents: do not try to work around it.)`,
  };
}

// Marks a part of a word that only the shell can know (a variable, `$(...)`).
const DYNAMIC = '\u0000';

interface SimpleCommand {
  words: string[];
  redirects: Array<{ op: string; target: string }>;
}

type Item = { kind: 'command'; command: SimpleCommand } | { kind: 'subshell-start' } | { kind: 'subshell-end' } | { kind: 'nested'; script: string };

const REDIRECT_OPS = ['&>>', '<<<', '<<-', '>>', '>|', '>&', '&>', '<<', '<>', '<&', '>', '<'];
const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);

/** Splits a script into simple commands, redirections and nested scripts. */
class Lexer {
  readonly #s: string;
  readonly #vars: Record<string, string>;
  readonly items: Item[] = [];
  #i = 0;
  #word = '';
  #inWord = false;
  #words: string[] = [];
  #redirects: SimpleCommand['redirects'] = [];
  #pendingOp: string | undefined;
  #heredocs: Array<{ delimiter: string; stripTabs: boolean }> = [];

  constructor(script: string, vars: Record<string, string>) {
    this.#s = script;
    this.#vars = vars;
  }

  run(): Item[] {
    const s = this.#s;
    while (this.#i < s.length) {
      const c = s[this.#i] ?? '';
      const next = s[this.#i + 1] ?? '';
      if (c === '\\') {
        if (next !== '\n') this.#append(next);
        this.#i += 2;
      } else if (c === "'") {
        const end = s.indexOf("'", this.#i + 1);
        const stop = end === -1 ? s.length : end;
        this.#append(s.slice(this.#i + 1, stop));
        this.#i = stop + 1;
      } else if (c === '"') {
        this.#readDoubleQuoted();
      } else if (c === '`') {
        this.#readBackquoted();
      } else if (c === '$') {
        this.#readDollar();
      } else if (c === '~' && !this.#inWord) {
        this.#readTilde();
      } else if (c === '#' && !this.#inWord) {
        const end = s.indexOf('\n', this.#i);
        this.#i = end === -1 ? s.length : end;
      } else if (c === '\n') {
        this.#finishCommand();
        this.#i += 1;
        this.#skipHeredocBodies();
      } else if (c === ' ' || c === '\t' || c === '\r') {
        this.#finishWord();
        this.#i += 1;
      } else if (c === '>' || c === '<' || (c === '&' && next === '>')) {
        if (this.#inWord && /^\d+$/.test(this.#word)) {
          this.#word = ''; // a file descriptor number such as the 2 in 2>
          this.#inWord = false;
        } else {
          this.#finishWord();
        }
        const op = REDIRECT_OPS.find((candidate) => s.startsWith(candidate, this.#i)) ?? c;
        this.#pendingOp = op;
        this.#i += op.length;
      } else if (c === ';' || c === '|' || c === '&' || c === '(' || c === ')') {
        this.#finishCommand();
        if (c === '(') this.items.push({ kind: 'subshell-start' });
        if (c === ')') this.items.push({ kind: 'subshell-end' });
        this.#i += 1;
      } else {
        this.#append(c);
        this.#i += 1;
      }
    }
    this.#finishCommand();
    return this.items;
  }

  #append(text: string): void {
    this.#word += text;
    this.#inWord = true;
  }

  #finishWord(): void {
    if (!this.#inWord) return;
    const word = this.#word;
    this.#word = '';
    this.#inWord = false;
    const op = this.#pendingOp;
    this.#pendingOp = undefined;
    if (op === '<<' || op === '<<-') {
      this.#heredocs.push({ delimiter: word, stripTabs: op === '<<-' });
    } else if (op !== undefined) {
      this.#redirects.push({ op, target: word });
    } else {
      this.#words.push(word);
    }
  }

  #finishCommand(): void {
    this.#finishWord();
    this.#pendingOp = undefined;
    if (this.#words.length > 0 || this.#redirects.length > 0) {
      this.items.push({ kind: 'command', command: { words: this.#words, redirects: this.#redirects } });
    }
    this.#words = [];
    this.#redirects = [];
  }

  #skipHeredocBodies(): void {
    const s = this.#s;
    for (const { delimiter, stripTabs } of this.#heredocs) {
      while (this.#i < s.length) {
        const newline = s.indexOf('\n', this.#i);
        const end = newline === -1 ? s.length : newline;
        const line = s.slice(this.#i, end);
        this.#i = end + 1;
        if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
      }
    }
    this.#heredocs = [];
  }

  #readDoubleQuoted(): void {
    const s = this.#s;
    this.#i += 1;
    this.#inWord = true;
    while (this.#i < s.length && s[this.#i] !== '"') {
      const c = s[this.#i] ?? '';
      const next = s[this.#i + 1] ?? '';
      if (c === '\\' && '$`"\\\n'.includes(next)) {
        if (next !== '\n') this.#append(next);
        this.#i += 2;
      } else if (c === '$') {
        this.#readDollar();
      } else if (c === '`') {
        this.#readBackquoted();
      } else {
        this.#append(c);
        this.#i += 1;
      }
    }
    this.#i += 1;
  }

  #readBackquoted(): void {
    const s = this.#s;
    let end = this.#i + 1;
    while (end < s.length && s[end] !== '`') end += s[end] === '\\' ? 2 : 1;
    this.items.push({ kind: 'nested', script: s.slice(this.#i + 1, end).replace(/\\([`$\\])/g, '$1') });
    this.#append(DYNAMIC);
    this.#i = end + 1;
  }

  #readDollar(): void {
    const s = this.#s;
    const next = s[this.#i + 1] ?? '';
    if (next === '(') {
      const end = matchingParen(s, this.#i + 1);
      if (s[this.#i + 2] !== '(') this.items.push({ kind: 'nested', script: s.slice(this.#i + 2, end) });
      this.#append(DYNAMIC);
      this.#i = end + 1;
    } else if (next === '{') {
      const end = s.indexOf('}', this.#i + 2);
      const stop = end === -1 ? s.length : end;
      this.#append(this.#vars[s.slice(this.#i + 2, stop)] ?? DYNAMIC);
      this.#i = stop + 1;
    } else if (/[A-Za-z_]/.test(next)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(this.#i + 1))?.[0] ?? next;
      this.#append(this.#vars[name] ?? DYNAMIC);
      this.#i += 1 + name.length;
    } else if (/[0-9@*#?$!-]/.test(next)) {
      this.#append(DYNAMIC);
      this.#i += 2;
    } else {
      this.#append('$');
      this.#i += 1;
    }
  }

  #readTilde(): void {
    const rest = this.#s.slice(this.#i + 1);
    const user = /^[A-Za-z0-9_.-]*/.exec(rest)?.[0] ?? '';
    const after = rest[user.length];
    if (after !== undefined && !/[/\s;|&)]/.test(after)) {
      this.#append('~');
      this.#i += 1;
      return;
    }
    // `~user` is someone else's home: somewhere outside, exact place unknown.
    this.#append(user === '' ? (this.#vars['HOME'] ?? DYNAMIC) : `/${DYNAMIC}`);
    this.#i += 1 + user.length;
  }
}

/** Index of the `)` matching the `(` at `open`, skipping quoted text. */
function matchingParen(s: string, open: number): number {
  let depth = 0;
  for (let j = open; j < s.length; j += 1) {
    const c = s[j];
    if (c === '\\') {
      j += 1;
    } else if (c === "'") {
      const end = s.indexOf("'", j + 1);
      j = end === -1 ? s.length : end;
    } else if (c === '"') {
      j += 1;
      while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
    } else if (c === '(') {
      depth += 1;
    } else if (c === ')') {
      depth -= 1;
      if (depth === 0) return j;
    }
  }
  return s.length;
}

// Words that may precede the real command name.
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', 'time']);
/** Commands that run their arguments as a command; value = options that take a value. */
const WRAPPERS: Record<string, string[]> = {
  sudo: ['-u', '-g', '-C', '-h', '-p'],
  doas: ['-u'],
  env: ['-u', '-C', '-S'],
  nohup: [],
  nice: ['-n'],
  command: [],
  exec: ['-a'],
  builtin: [],
  time: ['-f', '-o'],
  stdbuf: ['-i', '-o', '-e'],
  timeout: ['-s', '-k'],
  xargs: ['-I', '-n', '-P', '-L', '-d', '-a', '-E', '-s'],
};
/** Commands that may write to every operand; value = options that take a value. */
const WRITES_ALL_OPERANDS: Record<string, string[]> = {
  rm: [],
  rmdir: [],
  unlink: [],
  mv: ['-S', '-t'],
  touch: ['-d', '-t', '-r'],
  mkdir: ['-m'],
  tee: [],
  chmod: [],
  chown: [],
  chgrp: [],
  truncate: ['-s', '-r'],
  shred: ['-n', '-s'],
  mkfifo: ['-m'],
  mknod: ['-m'],
};
/** Commands that write to their last operand (or their `-t` directory). */
const WRITES_LAST_OPERAND: Record<string, string[]> = {
  cp: ['-S', '-t'],
  ln: ['-S', '-t'],
  install: ['-m', '-o', '-g', '-S', '-t'],
  rsync: ['-e', '-f'],
  scp: ['-P', '-i', '-o', '-F', '-c', '-l'],
};
/** Commands whose named options say where they write (or where they run). */
const WRITE_OPTIONS: Record<string, string[]> = {
  curl: ['-o', '--output'],
  wget: ['-O', '-P', '--output-document', '--directory-prefix'],
  tar: ['-C', '--directory'],
  unzip: ['-d'],
  git: ['-C'],
  make: ['-C', '--directory'],
  sort: ['-o', '--output'],
  npm: ['--prefix', '-C'],
};
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
const DEVICES = /^\/dev\/(?:null|zero|stdout|stderr|stdin|tty|fd\/\d+)$|^\/proc\/self\/fd\/\d+$/;
const MAX_NESTING = 8;

interface CwdState {
  /** Where the shell is, as far as we can tell; `undefined` once it is unknown. */
  cwd: string | undefined;
  stack: Array<string | undefined>;
}

class Guard {
  readonly #roots: string[];
  readonly #vars: Record<string, string>;

  constructor(options: WriteGuardOptions) {
    this.#roots = [options.workingDirectory, ...(options.writableRoots ?? [])].map((root) => path.resolve(root));
    this.#vars = { HOME: options.homeDirectory, TMPDIR: options.homeDirectory };
  }

  /** A description of the first outside write found, or `undefined`. */
  check(script: string, state: CwdState, depth: number): string | undefined {
    if (depth > MAX_NESTING) return 'the command nests shells too deeply to be checked';
    for (const item of new Lexer(script, this.#vars).run()) {
      let problem: string | undefined;
      if (item.kind === 'subshell-start') {
        state.stack.push(state.cwd);
      } else if (item.kind === 'subshell-end') {
        if (state.stack.length > 0) state.cwd = state.stack.pop();
      } else if (item.kind === 'nested') {
        problem = this.check(item.script, { cwd: state.cwd, stack: [] }, depth + 1);
      } else {
        problem = this.#checkCommand(item.command, state, depth);
      }
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  #checkCommand(command: SimpleCommand, state: CwdState, depth: number): string | undefined {
    for (const { op, target } of command.redirects) {
      if (!WRITE_OPS.has(op) || (op === '>&' && /^(?:\d+|-)$/.test(target))) continue;
      const outside = this.#outside(target, state.cwd);
      if (outside !== undefined) return `redirection \`${op} ${printable(target)}\` writes to ${printable(target)}${where(target, outside)}`;
    }
    const words = stripPrefixes(command.words);
    const name = path.basename(words[0] ?? '');
    const args = words.slice(1);

    if (name === 'cd' || name === 'pushd') return this.#checkCd(args, state);
    if (name === 'eval') return this.check(args.join(' '), { cwd: state.cwd, stack: [] }, depth + 1);
    if (SHELLS.has(name)) {
      // `-c`, possibly among other short flags (`bash -lc '…'`).
      const flagAt = args.findIndex((arg) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg));
      const script = flagAt === -1 ? undefined : args[flagAt + 1];
      return script === undefined ? undefined : this.check(script, { cwd: state.cwd, stack: [] }, depth + 1);
    }

    const targets: string[] = [];
    const allOptions = WRITES_ALL_OPERANDS[name];
    const lastOptions = WRITES_LAST_OPERAND[name];
    if (allOptions !== undefined) {
      const { operands, values } = splitArgs(args, allOptions);
      targets.push(...operands, ...targetDirectories(values));
    } else if (lastOptions !== undefined) {
      const { operands, values, flags } = splitArgs(args, lastOptions);
      const targetDirs = targetDirectories(values);
      if (targetDirs.length > 0) targets.push(...targetDirs);
      else if (name === 'install' && flags.some((flag) => /^-[a-zA-Z]*d/.test(flag))) targets.push(...operands);
      else if (operands.length >= 2) targets.push(operands.at(-1) ?? '');
      if (name === 'rsync' || name === 'scp') targets.splice(0, targets.length, ...targets.filter((t) => !isRemote(t)));
    } else if (name === 'sed' || name === 'perl') {
      targets.push(...inPlaceTargets(name, args));
    } else if (name === 'dd') {
      for (const arg of args) if (arg.startsWith('of=')) targets.push(arg.slice(3));
    } else if (name === 'find') {
      targets.push(...findTargets(args));
    } else if (WRITE_OPTIONS[name] !== undefined) {
      targets.push(...optionValues(args, WRITE_OPTIONS[name]));
    }
    for (const target of targets) {
      const outside = this.#outside(target, state.cwd);
      if (outside !== undefined) return `\`${name}\` would write to ${printable(target)}${where(target, outside)}`;
    }
    return undefined;
  }

  #checkCd(args: string[], state: CwdState): string | undefined {
    const target = args.find((arg) => !arg.startsWith('-') || arg === '-');
    if (target === '-') {
      state.cwd = undefined;
      return undefined;
    }
    const destination = target ?? this.#vars['HOME'] ?? '';
    const outside = this.#outside(destination, state.cwd);
    if (outside !== undefined) return `\`cd ${printable(destination)}\` would leave the working directory (for ${outside})`;
    const resolved = this.#resolve(destination, state.cwd);
    state.cwd = typeof resolved === 'string' ? resolved : undefined;
    return undefined;
  }

  /** The absolute path `word` names, or `'unknown'` when only the shell can tell. */
  #resolve(word: string, cwd: string | undefined): string | 'unknown' {
    const dynamicAt = word.indexOf(DYNAMIC);
    if (dynamicAt === -1) {
      if (path.isAbsolute(word)) return path.resolve(word);
      return cwd === undefined ? 'unknown' : path.resolve(cwd, word);
    }
    // Only the directory before the first unknown part is certain.
    const known = word.slice(0, dynamicAt);
    const slash = known.lastIndexOf('/');
    if (slash === -1) return 'unknown';
    const directory = known.slice(0, slash + 1);
    if (!path.isAbsolute(directory) && cwd === undefined) return 'unknown';
    const resolved = path.resolve(cwd ?? '/', directory);
    // A known directory inside the roots says nothing about where `$X/..` ends up.
    return this.#isInside(resolved) ? 'unknown' : resolved;
  }

  /** The outside path `word` names, or `undefined` when it is inside or unknown. */
  #outside(word: string, cwd: string | undefined): string | undefined {
    if (DEVICES.test(word)) return undefined;
    const resolved = this.#resolve(word, cwd);
    if (resolved === 'unknown' || this.#isInside(resolved)) return undefined;
    return resolved;
  }

  #isInside(absolute: string): boolean {
    return this.#roots.some((root) => absolute === root || absolute.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
  }
}

function where(target: string, outside: string): string {
  return printable(target) === outside ? ', outside the working directory' : ` (${outside}), outside the working directory`;
}

function printable(word: string): string {
  return word.replaceAll(DYNAMIC, '…');
}

function stripPrefixes(input: string[]): string[] {
  let words = input;
  for (;;) {
    const first = words[0];
    if (first === undefined) return words;
    if (KEYWORDS.has(first) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) {
      words = words.slice(1);
      continue;
    }
    const valueOptions = WRAPPERS[path.basename(first)];
    if (valueOptions === undefined) return words;
    let i = 1;
    while (i < words.length) {
      const word = words[i] ?? '';
      if (valueOptions.includes(word)) i += 2;
      else if (word.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) i += 1;
      else break;
    }
    // `timeout` takes a duration before the command.
    if (path.basename(first) === 'timeout') i += 1;
    words = words.slice(i);
  }
}

/** Operands, option values (by option) and flags of `args`; `--` ends options. */
function splitArgs(args: string[], valueOptions: string[]): { operands: string[]; values: Array<[string, string]>; flags: string[] } {
  const operands: string[] = [];
  const values: Array<[string, string]> = [];
  const flags: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (valueOptions.includes(arg)) {
      values.push([arg, args[i + 1] ?? '']);
      i += 1;
    } else if (arg.startsWith('--') && arg.includes('=')) {
      const eq = arg.indexOf('=');
      values.push([arg.slice(0, eq), arg.slice(eq + 1)]);
    } else if (arg.startsWith('-') && arg.length > 1) {
      flags.push(arg);
    } else {
      operands.push(arg);
    }
  }
  return { operands, values, flags };
}

function targetDirectories(values: Array<[string, string]>): string[] {
  return values.filter(([option]) => option === '-t' || option === '--target-directory').map(([, value]) => value);
}

function isRemote(target: string): boolean {
  const colon = target.indexOf(':');
  return colon > 0 && !target.slice(0, colon).includes('/');
}

/** Files that `sed -i` / `perl -i` would rewrite. */
function inPlaceTargets(name: 'sed' | 'perl', args: string[]): string[] {
  const inPlace = args.some((arg) => arg === '--in-place' || arg.startsWith('--in-place=') || /^-[a-zA-Z]*i/.test(arg));
  if (!inPlace) return [];
  const scriptOption = name === 'sed' ? /^-[a-zA-Z]*[ef]$|^--(?:expression|file)$/ : /^-[a-zA-Z]*e$/i;
  const operands: string[] = [];
  let scriptGiven = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (scriptOption.test(arg) && !arg.startsWith('-i')) {
      scriptGiven = true;
      i += 1;
    } else if (arg.startsWith('--expression=') || arg.startsWith('--file=')) {
      scriptGiven = true;
    } else if (!arg.startsWith('-')) {
      operands.push(arg);
    }
  }
  // Without -e the first operand is the script, not a file.
  return scriptGiven ? operands : operands.slice(1);
}

/** Start paths of a `find` that deletes or runs a writing command. */
function findTargets(args: string[]): string[] {
  const expressionAt = args.findIndex((arg) => arg.startsWith('-') || arg === '(' || arg === '!');
  const roots = expressionAt === -1 ? args : args.slice(0, expressionAt);
  const writes = args.some(
    (arg, i) =>
      arg === '-delete' ||
      (['-exec', '-execdir', '-ok', '-okdir'].includes(arg) &&
        (path.basename(args[i + 1] ?? '') in WRITES_ALL_OPERANDS || path.basename(args[i + 1] ?? '') in WRITES_LAST_OPERAND)),
  );
  return writes ? (roots.length > 0 ? roots : ['.']) : [];
}

function optionValues(args: string[], options: string[]): string[] {
  const found: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    for (const option of options) {
      if (arg === option) found.push(args[i + 1] ?? '');
      else if (option.startsWith('--') && arg.startsWith(`${option}=`)) found.push(arg.slice(option.length + 1));
      else if (!option.startsWith('--') && arg.startsWith(option) && arg.length > option.length && !arg.startsWith('--')) {
        found.push(arg.slice(option.length));
      }
    }
  }
  return found;
}
