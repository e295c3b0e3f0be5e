/** Shannon entropy of `text` in bits per character. */
export function shannonEntropy(text: string): number {
  if (text === '') return 0;
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  const length = [...text].length;
  for (const n of counts.values()) {
    const p = n / length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
