/**
 * Preloaded with `--import` to run a process as if `@modelcontextprotocol/sdk`
 * were not installed: resolving it fails the way Node fails for a missing package.
 */
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('@modelcontextprotocol/sdk')) {
      const error = new Error(`Cannot find package '@modelcontextprotocol/sdk' imported from ${context.parentURL ?? 'here'}`) as Error & { code: string };
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return nextResolve(specifier, context);
  },
});
