/**
 * Imported first by every entry point, so that an unsupported Node fails at
 * import with one clear line instead of a missing built-in or a syntax error
 * somewhere further in.
 */
import { UnsupportedRuntimeError } from '../errors/unsupported-runtime-error.ts';
import { isSupportedNode, unsupportedNodeMessage } from './node-version.ts';

if (!isSupportedNode()) throw new UnsupportedRuntimeError(unsupportedNodeMessage(), process.versions.node);
