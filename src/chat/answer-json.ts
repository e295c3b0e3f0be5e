/**
 * Finding the JSON value in a model's answer (bare, fenced in Markdown, or in
 * prose) and saying where a text that is not JSON breaks, without quoting it.
 */

/** A stretch `[start, end)` of the answer that may hold the JSON value. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** `span` without the white space at its ends. */
export function trim(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return { start, end };
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * The content of each Markdown code block fenced with backticks, whatever its
 * language tag. Fences are found at the start of a line only, so a fence
 * written inside a JSON string (where line breaks are escaped) is no fence.
 * A closing fence at the end of the content's last line is taken too, and a
 * block the answer never closes runs to its end.
 */
export function fencedBlocks(text: string): Span[] {
  const blocks: Span[] = [];
  let open = -1;
  for (let lineStart = 0; lineStart < text.length; ) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd).trim();
    if (open === -1) {
      // A line that opens and closes a block (```json {...}```) is left to the bracket scan.
      if (line.startsWith('```') && !line.replace(/^`+/, '').includes('```')) open = lineEnd + 1;
    } else if (line.startsWith('```')) {
      blocks.push(trim(text, { start: open, end: lineStart }));
      open = -1;
    } else if (line.endsWith('```')) {
      blocks.push(trim(text, { start: open, end: text.lastIndexOf('```', lineEnd) }));
      open = -1;
    }
    lineStart = lineEnd + 1;
  }
  if (open !== -1 && open < text.length) blocks.push(trim(text, { start: open, end: text.length }));
  return blocks;
}

/**
 * The outermost balanced `{…}` and `[…]` stretches of the text, in order,
 * brackets inside strings not counted. One pass: a stretch that closes
 * replaces the stretches inside it, so one that never closes (a stray `[` in
 * the prose) still leaves those inside it.
 */
export function bracketed(text: string): Span[] {
  const spans: Span[] = [];
  const opened: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '{' || c === '[') {
      opened.push(i);
    } else if (opened.length > 0) {
      if (c === '"') inString = true;
      else if (c === '}' || c === ']') {
        const start = opened.pop()!;
        while (spans.length > 0 && spans.at(-1)!.start > start) spans.pop();
        spans.push({ start, end: i + 1 });
      }
    }
  }
  return spans;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * Where and why the `span` of `text`, which JSON.parse refused, is not JSON,
 * as "<problem> at line L, column C" of the whole text. Found with a scanner
 * of its own, as the engine's message quotes the text around the spot.
 */
export function syntaxProblem(text: string, span: Span): string | undefined {
  const json = text.slice(span.start, span.end);
  const at = (offset: number, problem: string): string => {
    const before = text.slice(0, span.start + offset);
    const line = before.split('\n').length;
    return `${problem} at line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
  };
  const open: string[] = [];
  let expect: 'value' | 'key' | 'colon' | 'after' = 'value';
  let i = 0;
  for (;;) {
    while (i < json.length && isSpace(json.charCodeAt(i))) i++;
    const c = json[i];
    // Nothing found wrong: the scanner is only a guide, the engine's parser is the judge.
    if (c === undefined) return expect === 'after' && open.length === 0 ? undefined : at(i, 'the text ends before the JSON value does');
    if (expect === 'after') {
      const top = open.at(-1);
      if (top === undefined) return at(i, 'unexpected text after the JSON value');
      const close = top === '{' ? '}' : ']';
      if (c === ',') expect = top === '{' ? 'key' : 'value';
      else if (c === close) open.pop();
      else return at(i, `expected ',' or '${close}'`);
      i++;
    } else if (expect === 'colon') {
      if (c !== ':') return at(i, "expected ':' after the property name");
      expect = 'value';
      i++;
    } else if (c === '"') {
      const end = stringEnd(json, i);
      if (typeof end !== 'number') return at(end.at, end.problem);
      expect = expect === 'key' ? 'colon' : 'after';
      i = end;
    } else if (expect === 'key') {
      return at(i, 'expected a double-quoted property name');
    } else if (c === '{' || c === '[') {
      open.push(c);
      expect = 'value';
      i++;
      while (i < json.length && isSpace(json.charCodeAt(i))) i++;
      if (json[i] === (c === '{' ? '}' : ']')) {
        open.pop();
        expect = 'after';
        i++;
      } else if (c === '{') expect = 'key';
    } else {
      NUMBER.lastIndex = i;
      const length = NUMBER.exec(json)?.[0].length ?? ['true', 'false', 'null'].find((word) => json.startsWith(word, i))?.length;
      if (length === undefined) return at(i, 'expected a JSON value');
      expect = 'after';
      i += length;
    }
  }
}

/** The offset after the string that starts at `start`, or where and why it is broken. */
function stringEnd(json: string, start: number): number | { at: number; problem: string } {
  for (let i = start + 1; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return { at: i, problem: 'a control character (a raw line break or tab) in a string' };
    if (c === 0x5c) {
      const escaped = json[i + 1];
      if (escaped === 'u' ? !/^[0-9a-fA-F]{4}$/.test(json.slice(i + 2, i + 6)) : !(escaped !== undefined && '"\\/bfnrt'.includes(escaped))) {
        return { at: i, problem: 'a bad escape in a string' };
      }
      i += escaped === 'u' ? 5 : 1;
    }
  }
  return { at: start, problem: 'a string that is never closed' };
}
