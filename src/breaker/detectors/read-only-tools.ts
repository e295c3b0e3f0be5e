import { foldKey } from '../similarity/identity-keys.ts';

/**
 * Matcher for read-only tool names: an entry matches the snake_cased tool
 * name exactly or as a prefix followed by `_` (`get` matches `get_order`,
 * `getOrder`, not `getaway`); entries containing `*` are globs.
 */
export function readOnlyMatcher(entries: readonly string[]): (tool: string) => boolean {
  const verbs = new Set<string>();
  const globs: RegExp[] = [];
  for (const entry of entries) {
    const folded = foldKey(entry);
    if (folded.includes('*')) {
      globs.push(new RegExp(`^${folded.split('*').map(escapeRegExp).join('.*')}$`));
    } else verbs.add(folded);
  }
  const cache = new Map<string, boolean>();
  return (tool: string) => {
    const cached = cache.get(tool);
    if (cached !== undefined) return cached;
    const folded = foldKey(tool.trim());
    const underscore = folded.indexOf('_');
    const result =
      verbs.has(folded) ||
      (underscore > 0 && verbs.has(folded.slice(0, underscore))) ||
      [...verbs].some((v) => v.includes('_') && folded.startsWith(`${v}_`)) ||
      globs.some((g) => g.test(folded));
    if (cache.size < 1024) cache.set(tool, result);
    return result;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
