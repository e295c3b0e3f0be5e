/**
 * Markdown that legitimately repeats itself: code blocks, tables and list
 * items. A table of flights or a list of steps shares most words row to row
 * and must never read as the model repeating itself, so these are removed
 * before text repetition is judged.
 */
export function stripStructuredMarkdown(text: string): string {
  const lines = text.split('\n');
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const trimmed = line.trim();
    const fenceMatch = /^(`{3,}|~{3,})/.exec(trimmed);
    if (fence !== null) {
      if (fenceMatch !== null && fenceMatch[1]!.startsWith(fence)) fence = null;
      continue;
    }
    if (fenceMatch !== null) {
      fence = fenceMatch[1]!;
      continue;
    }
    if (/^( {4}|\t)/.test(line) && trimmed !== '') continue; // indented code
    // Table row: starts with a pipe or has two. Found with indexOf rather than
    // by matching every pipe, which scanned and allocated for each line of prose.
    const pipe = trimmed.indexOf('|');
    if (pipe === 0 || (pipe > 0 && trimmed.indexOf('|', pipe + 1) !== -1)) continue;
    if (/^([-*+•]|\d{1,3}[.)])\s+/.test(trimmed)) continue; // list item
    kept.push(line);
  }
  return kept.join('\n');
}

/** Splits prose into sentences (Latin and CJK sentence marks, and line breaks). */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|(?<=[。！？])|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
