import { foldKey } from '../similarity/identity-keys.ts';

/**
 * Where a namespaced tool name's own name starts: MCP clients prefix a
 * server's tools with it (`mcp__airline__get_order`), other hosts join them
 * with `.`, `/` or `:` (`airline.get_order`).
 */
const NAMESPACE = /__|[./:]/;

/**
 * Matcher for read-only tool names: an entry matches the snake_cased tool
 * name exactly or as a prefix followed by `_` (`get` matches `get_order`,
 * `getOrder`, not `getaway`), also the name after a namespace
 * (`mcp__airline__get_order`, `airline.get_order`); entries containing `*`
 * are globs, matched against the whole name.
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
  const startsWithVerb = (name: string): boolean => {
    const underscore = name.indexOf('_');
    return verbs.has(name) || (underscore > 0 && verbs.has(name.slice(0, underscore))) || [...verbs].some((v) => v.includes('_') && name.startsWith(`${v}_`));
  };
  const cache = new Map<string, boolean>();
  return (tool: string) => {
    const cached = cache.get(tool);
    if (cached !== undefined) return cached;
    const folded = foldKey(tool.trim());
    const own = folded.split(NAMESPACE).at(-1) ?? folded;
    const result = startsWithVerb(folded) || (own !== folded && startsWithVerb(own)) || globs.some((g) => g.test(folded));
    if (cache.size < 1024) cache.set(tool, result);
    return result;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
