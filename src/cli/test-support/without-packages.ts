/**
 * Preloaded with `--import` to run a process as if the packages named in
 * `GOVERNOR_TEST_WITHOUT` (comma-separated) were not installed: resolving one
 * of them, or a path inside it, fails the way Node fails for a missing package.
 */
import { registerHooks } from 'node:module';

const missing = (process.env['GOVERNOR_TEST_WITHOUT'] ?? '').split(',').filter((name) => name !== '');

registerHooks({
  resolve(specifier, context, nextResolve) {
    const name = missing.find((packageName) => specifier === packageName || specifier.startsWith(`${packageName}/`));
    if (name !== undefined) {
      const error = new Error(`Cannot find package '${name}' imported from ${context.parentURL ?? 'here'}`) as Error & { code: string };
      error.code = 'ERR_MODULE_NOT_FOUND';
      throw error;
    }
    return nextResolve(specifier, context);
  },
});
