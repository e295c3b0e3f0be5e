import { GovernorError } from '../errors/governor-error.ts';

/**
 * Thrown when the scripted stand-in model server is used in the wrong state
 * (e.g. reading `url` before `start()`) or cannot listen.
 */
export class ScriptedModelServerError extends GovernorError {
  declare readonly code: 'GOVERNOR_SCRIPTED_SERVER_NOT_STARTED' | 'GOVERNOR_SCRIPTED_SERVER_LISTEN_FAILED';

  constructor(code: ScriptedModelServerError['code'], message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
