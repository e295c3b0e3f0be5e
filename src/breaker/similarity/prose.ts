/** A text split into its prose and its structured markdown. */
export interface SplitMarkdown {
  /** Everything that is not a code block, table row or list item, line breaks kept. */
  readonly prose: string;
  /** The code blocks (fences included), table rows and list items, one per line, in order. */
  readonly structured: string;
}

/**
 * Separates markdown that legitimately repeats its shape — code blocks,
 * tables and list items — from the prose around it. A table of flights or a
 * list of steps shares most words row to row and must never read as the
 * model repeating itself, so similarity is judged on the prose; the
 * structured part is kept apart so that its exact content can still be
 * compared (a different code block is a different attempt, the same one
 * again is not).
 */
export function splitStructuredMarkdown(text: string): SplitMarkdown {
  // Most replies are a single paragraph of prose: no lines to split and join again.
  if (!text.includes('\n')) {
    const trimmed = text.trim();
    return FENCE.test(trimmed) || isStructuredLine(text, trimmed) ? { prose: '', structured: text } : { prose: text, structured: '' };
  }
  const lines = text.split('\n');
  const kept: string[] = [];
  const structured: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const trimmed = line.trim();
    const fenceMatch = FENCE.exec(trimmed);
    if (fence !== null) {
      if (fenceMatch !== null && fenceMatch[1]!.startsWith(fence)) fence = null;
      structured.push(line);
      continue;
    }
    if (fenceMatch !== null) {
      fence = fenceMatch[1]!;
      structured.push(line);
      continue;
    }
    if (isStructuredLine(line, trimmed)) structured.push(line);
    else kept.push(line);
  }
  return { prose: kept.join('\n'), structured: structured.join('\n') };
}

/** The prose of `text`: {@link splitStructuredMarkdown} without the structured part. */
export function stripStructuredMarkdown(text: string): string {
  return splitStructuredMarkdown(text).prose;
}

const FENCE = /^(`{3,}|~{3,})/;
const INDENTED = /^( {4}|\t)/;
const LIST_ITEM = /^([-*+•]|\d{1,3}[.)])\s+/;

function isStructuredLine(line: string, trimmed: string): boolean {
  if (INDENTED.test(line) && trimmed !== '') return true; // indented code
  // Table row: starts with a pipe or has two. Found with indexOf rather than
  // by matching every pipe, which scanned and allocated for each line of prose.
  const pipe = trimmed.indexOf('|');
  if (pipe === 0 || (pipe > 0 && trimmed.indexOf('|', pipe + 1) !== -1)) return true;
  return LIST_ITEM.test(trimmed); // list item
}

/** Splits prose into sentences (Latin and CJK sentence marks, and line breaks). */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|(?<=[。！？])|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
