import { foldKey } from '../similarity/identity-keys.ts';

/**
 * Where a namespaced tool name's own name starts: MCP clients prefix a
 * server's tools with it (`mcp__airline__get_order`), other hosts join them
 * with `.`, `/` or `:` (`airline.get_order`).
 */
const NAMESPACE = /__|[./:]/;

/**
 * Verbs that name a tool that writes: a success of one with other arguments
 * than before changed something, whatever it answered ("Successfully wrote
 * to src/a.ts" each time). Not `add` (a calculator's), `run` or `execute`
 * (a shell may only read), nor an editor that also views (`str_replace_editor`).
 */
export const WRITING_VERBS: readonly string[] = [
  'write',
  'edit',
  'update',
  'create',
  'save',
  'set',
  'put',
  'patch',
  'insert',
  'append',
  'replace',
  'delete',
  'remove',
  'rename',
  'move',
  'upload',
  'modify',
  'overwrite',
  'apply',
];

/**
 * Matcher for tool names by verb (the read-only ones, the writing ones): an
 * entry matches the snake_cased tool name exactly or as a prefix followed by
 * `_` (`get` matches `get_order`, `getOrder`, not `getaway`), also the name
 * after a namespace (`mcp__airline__get_order`, `airline.get_order`); entries
 * containing `*` are globs, matched against the whole name.
 */
export function toolVerbMatcher(entries: readonly string[]): (tool: string) => boolean {
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
