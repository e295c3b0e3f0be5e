/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name closest to a mistyped one, if it is close enough to be what
 * was meant (at most a third of its letters off, or a prefix of it).
 */
export function didYouMean(typed: string, known: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  let best: { name: string; score: number } | undefined;
  for (const name of known) {
    const score = name.startsWith(word) && word.length >= 2 ? 0.5 : distance(word, name);
    if (score <= Math.max(1, Math.floor(name.length / 3)) && (best === undefined || score < best.score)) best = { name, score };
  }
  return best?.name;
}
