import { statSync } from 'node:fs';
import { InvalidOptionError } from '../errors/governor-error.ts';
import { ToolCallingAdvisor } from '../advisors/tool-call-advisor.ts';
import type { Advisor } from '../chat/advisor.ts';
import { ChatClient } from '../chat/chat-client.ts';
import { AgentLoop, type AgentLoopEvent, type AgentLoopResult } from './agent-loop.ts';
import type { PriceTable } from '../model/pricing.ts';
import type { SupportedLanguageModel } from '../model/resolve-model.ts';
import { resolveSandbox, type SandboxMode } from './sandbox.ts';
import { shellTool } from './shell-tool.ts';
import { submitTool } from './submit-tool.ts';
import { AgentBreaker } from '../breaker/agent-breaker.ts';
import type { TelemetryOptions } from '../telemetry/telemetry-options.ts';
import { is, MAX_TIMER_MS, validateOptions, type OptionRules } from '../errors/validate-options.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../advisors/tool-timeout.ts';

/** Options of {@link MiniAgent}. */
export interface MiniAgentOptions {
  /** Any AI SDK language model of spec V2, V3 or V4. */
  readonly model: SupportedLanguageModel;
  /** Where commands run; must exist. */
  readonly workingDirectory: string;
  /** Time limit of one shell command. @default 30_000 */
  readonly commandTimeoutMs?: number;
  /**
   * Time limit of any tool call, the shell included: a backstop that frees the
   * loop even if a command cannot be killed.
   * @default 300_000 (5 minutes), or `commandTimeoutMs` + 10 s when that is longer
   */
  readonly toolTimeoutMs?: number;
  /** @default 20 */
  readonly maxInvocations?: number;
  /** @default 600_000 */
  readonly timeoutMs?: number;
  /**
   * Most USD the run may spend; each model call's output is bounded to what is
   * left (see `AgentLoopOptions.costLimitUsd`, and what stays approximate there).
   * @default no limit
   */
  readonly costLimitUsd?: number;
  readonly prices?: PriceTable;
  /** The breaker watching the agent; `false` runs without one. @default a new AgentBreaker with its defaults */
  readonly breaker?: AgentBreaker | false;
  readonly onProgress?: (event: AgentLoopEvent) => void;
  readonly abortSignal?: AbortSignal;
  /** OpenTelemetry settings of the run (see `AgentLoopOptions.telemetry`). */
  readonly telemetry?: TelemetryOptions;
  /**
   * How the agent's shell commands are confined (see `ShellToolOptions.sandbox`):
   * `'auto'` uses bubblewrap where `bwrap` works and otherwise runs without a
   * sandbox, warning once (see {@link MiniAgent.sandboxWarning}).
   * @default 'auto'
   */
  readonly sandbox?: SandboxMode;
  /** Give sandboxed commands the host's network. @default false */
  readonly network?: boolean;
  /** Variables commands get besides PATH, HOME, TMPDIR, LANG and TERM (see `ShellToolOptions.env`). @default {} */
  readonly env?: Record<string, string | undefined>;
}

/** What each option of MiniAgent accepts. */
const MINI_AGENT_OPTION_RULES: OptionRules<MiniAgentOptions> = {
  model: is.any(), // checked by ChatClient.builder
  workingDirectory: is.string({ nonEmpty: true }),
  commandTimeoutMs: is.timeMs(),
  toolTimeoutMs: is.timeMs(),
  maxInvocations: is.integer(1),
  timeoutMs: is.timeMs(),
  costLimitUsd: is.number(0, Number.MAX_VALUE, { exclusiveMin: true }),
  prices: is.object(),
  breaker: (value, path) => {
    if (value !== false) is.having('an AgentBreaker or false', 'checkToolCall', 'reset')(value, path);
  },
  onProgress: is.function(),
  abortSignal: is.having('an AbortSignal', 'aborted', 'addEventListener'),
  telemetry: is.object(),
  sandbox: is.oneOf('bubblewrap', 'none', 'auto'),
  network: is.boolean(),
  env: is.recordOf(is.either('a string or undefined', is.string(), is.oneOf(undefined))),
};

const SYSTEM = `You are a careful software engineer working in a shell.
Use the shell tool to inspect files, edit them and run checks; each command runs in a fresh shell in the working directory.
When the task is done, call submit with a short summary. Do not repeat a command whose result cannot change.`;

/**
 * A small software-engineering agent: a shell, a finish tool, the breaker,
 * under AgentLoop's limits. Its commands run in the bubblewrap sandbox where
 * the host supports it (see {@link MiniAgentOptions.sandbox}).
 *
 * @throws InvalidOptionError for a missing working directory or a bad option
 * @throws SandboxUnavailableError for `sandbox: 'bubblewrap'` where bwrap cannot run
 */
export class MiniAgent {
  readonly client: ChatClient;
  readonly breaker: AgentBreaker | undefined;
  /** The sandbox commands run in, as resolved on this host. */
  readonly sandbox: 'bubblewrap' | 'none';
  /** Why commands run without a sandbox although `'auto'` asked for one; `undefined` otherwise. */
  readonly sandboxWarning: string | undefined;
  readonly #options: MiniAgentOptions;

  constructor(options: MiniAgentOptions) {
    validateOptions('MiniAgent', options, MINI_AGENT_OPTION_RULES, { required: ['model', 'workingDirectory'] });
    let isDirectory = false;
    try {
      isDirectory = statSync(options.workingDirectory).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) throw new InvalidOptionError('workingDirectory', `"${options.workingDirectory}" does not exist or is not a directory`);
    this.#options = options;
    const sandbox = resolveSandbox(options.sandbox);
    this.sandbox = sandbox.kind;
    this.sandboxWarning = sandbox.warning;
    this.breaker = options.breaker === false ? undefined : (options.breaker ?? new AgentBreaker());
    // The shell's own timeout (and its kill) must get to act before the backstop does.
    const toolTimeoutMs = options.toolTimeoutMs ?? Math.min(MAX_TIMER_MS, Math.max(DEFAULT_TOOL_TIMEOUT_MS, (options.commandTimeoutMs ?? 30_000) + 10_000));
    const advisors: Advisor[] = [new ToolCallingAdvisor({ toolTimeoutMs })];
    if (this.breaker) advisors.push(this.breaker);
    this.client = ChatClient.builder(options.model)
      .defaultSystem(SYSTEM)
      .defaultAdvisors(...advisors)
      .defaultTools({
        shell: shellTool({
          workingDirectory: options.workingDirectory,
          commandTimeoutMs: options.commandTimeoutMs,
          // 'auto' is resolved here, so the tool warns (once) rather than the agent probing twice.
          sandbox: options.sandbox ?? 'auto',
          ...(options.network === undefined ? {} : { network: options.network }),
          ...(options.env === undefined ? {} : { env: options.env }),
        }),
        submit: submitTool(),
      })
      .build();
  }

  /** Runs the task to an end; see {@link AgentLoopResult.status}. */
  run(task: string): Promise<AgentLoopResult> {
    const o = this.#options;
    return new AgentLoop({
      client: this.client,
      maxInvocations: o.maxInvocations,
      timeoutMs: o.timeoutMs,
      costLimitUsd: o.costLimitUsd,
      prices: o.prices,
      finishTool: 'submit',
      onProgress: o.onProgress,
      abortSignal: o.abortSignal,
      telemetry: o.telemetry,
      name: 'MiniAgent',
    }).run(task);
  }
}
