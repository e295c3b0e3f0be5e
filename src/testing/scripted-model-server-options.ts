import { InvalidOptionError } from '../errors/governor-error.ts';
import { describeValue, is, type OptionRules, validateOptions } from '../errors/validate-options.ts';
import type { RecordedRequest } from './recorded-request.ts';
import { type ScriptedTurn, validateScriptedTurn } from './scripted-turn.ts';

/**
 * Computes the turn for a request. `index` counts chat completion requests
 * from 0. May be async, e.g. to wait for a signal from the test.
 */
export type ScriptFunction = (request: RecordedRequest, index: number) => ScriptedTurn | Promise<ScriptedTurn>;

/** What to answer once an array script has played all its turns. */
export type OnExhausted = 'error' | 'repeat-last';

/** Options of {@link ScriptedModelServer}, the scripted stand-in for a real model. */
export interface ScriptedModelServerOptions {
  /**
   * The turns to play, one per chat completion request, in order; or a function
   * that computes each turn from the request it answers.
   */
  script: readonly ScriptedTurn[] | ScriptFunction;
  /**
   * What happens when an array script has no turn left: `'error'` answers HTTP 400 (not retried)
   * with a message saying the script ran out; `'repeat-last'` plays the last turn again.
   * @default 'error'
   */
  onExhausted?: OnExhausted;
  /**
   * Model id the stand-in reports in responses and in `GET /v1/models`.
   * @default 'scripted-stand-in'
   */
  modelId?: string;
  /**
   * TCP port to listen on; 0 picks a free port.
   * @default 0
   */
  port?: number;
  /**
   * Interface to listen on. Keep the default unless the model must be reachable from elsewhere.
   * @default '127.0.0.1'
   */
  host?: string;
}

/** Options after defaults and validation. */
export interface ResolvedServerOptions {
  script: readonly ScriptedTurn[] | ScriptFunction;
  onExhausted: OnExhausted;
  modelId: string;
  port: number;
  host: string;
}

/** Default model id: says plainly that no real model answers. */
export const DEFAULT_MODEL_ID = 'scripted-stand-in';

/** What each option of ScriptedModelServer accepts; `script`'s turns are checked one by one afterwards. */
const SCRIPTED_MODEL_SERVER_OPTION_RULES: OptionRules<ScriptedModelServerOptions> = {
  script: (value, path) => {
    if (typeof value !== 'function' && !Array.isArray(value)) {
      throw new InvalidOptionError(path, `must be an array of scripted turns or a function returning one, got ${describeValue(value)}`);
    }
  },
  onExhausted: is.oneOf('error', 'repeat-last'),
  modelId: is.string({ nonEmpty: true }),
  port: is.integer(0, 65535),
  host: is.string({ nonEmpty: true }),
};

/**
 * Applies defaults and rejects bad options at construction, naming the option
 * (an unknown key too: `onExhaust` is refused, not ignored). Array scripts are
 * validated turn by turn and copied, so later mutation of the caller's array
 * cannot change what is played.
 */
export function resolveServerOptions(options: ScriptedModelServerOptions): ResolvedServerOptions {
  validateOptions('ScriptedModelServer', options, SCRIPTED_MODEL_SERVER_OPTION_RULES, { required: ['script'] });
  const { script, onExhausted = 'error', modelId = DEFAULT_MODEL_ID, port = 0, host = '127.0.0.1' } = options;
  if (typeof script === 'function') return { script, onExhausted, modelId, port, host };
  script.forEach((turn: unknown, i) => {
    validateScriptedTurn(turn, `script[${i}]`);
  });
  if (script.length === 0 && onExhausted === 'repeat-last') {
    throw new InvalidOptionError('script', "needs at least one turn when onExhausted is 'repeat-last'");
  }
  return { script: [...script], onExhausted, modelId, port, host };
}
