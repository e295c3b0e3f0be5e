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
    if (trimmed.startsWith('|') || (trimmed.match(/\|/g)?.length ?? 0) >= 2) continue; // table row
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
