import { GovernorError } from './governor-error.ts';

/** Deepest JSON nesting accepted in tool arguments and trajectory lines unless told otherwise. */
export const DEFAULT_MAX_NESTING_DEPTH = 256;

/** A JSON text nests arrays/objects deeper than allowed; parsing it would risk a stack overflow downstream. */
export class NestingTooDeepError extends GovernorError {
  declare readonly code: 'GOVERNOR_NESTING_TOO_DEEP';
  readonly maxDepth: number;

  constructor(what: string, maxDepth: number) {
    super('GOVERNOR_NESTING_TOO_DEEP', `${what} nest deeper than ${maxDepth} levels of arrays and objects.`);
    this.maxDepth = maxDepth;
  }
}

/**
 * True when the JSON text nests deeper than `maxDepth`. A single pass without
 * recursion that skips string contents, so it is safe on any input, valid
 * JSON or not.
 */
export function jsonNestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
