/**
 * `usd` as dollars for people: 4 decimals from a cent up, 2 significant digits
 * below it, so that a small cost never reads as nothing (`$0.000032`, not
 * `$0.0000`).
 */
export function formatUsd(usd: number): string {
  if (usd === 0 || !Number.isFinite(usd) || Math.abs(usd) >= 0.01) return `$${usd.toFixed(4)}`;
  // Fixed notation (toPrecision would switch to an exponent below 1e-6); toFixed takes at most 100 digits.
  return `$${usd.toFixed(Math.min(100, 1 - Math.floor(Math.log10(Math.abs(usd)))))}`;
}
