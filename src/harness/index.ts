// Costs
export {
  DEFAULT_PRICES,
  estimateCost,
  findPrice,
  mergePrices,
  priceUsage,
  projectCallCost,
  type CallProjectionInput,
  type CostEstimate,
  type ModelPrice,
  type PriceTable,
  type TokenUsage,
} from '../model/pricing.ts';

// Tools
export { shellTool, SHELL_TEMP_DIRECTORY, type ShellToolOptions } from './shell-tool.ts';
export { submitTool, type ReturnDirectTool } from './submit-tool.ts';
export { checkCommandWrites, type WriteCheck, type WriteGuardOptions } from './write-guard.ts';
export { isSecretVariable, withoutSecrets } from './safe-env.ts';
export { runCommand, CommandStartError, type CommandOutcome, type RunCommandOptions } from './run-command.ts';
export {
  bubblewrapArgs,
  probeBubblewrap,
  resolveSandbox,
  SandboxUnavailableError,
  type BubblewrapLayout,
  type BubblewrapProbe,
  type ResolvedSandbox,
  type SandboxMode,
} from './sandbox.ts';

// Jury
export type { Judge, JudgeInput, Verdict } from './jury/judge.ts';
export { Jury, type JuryOptions, type JuryStrategy } from './jury/jury.ts';
export { commandJudge, type CommandJudgeOptions } from './jury/command-judge.ts';
export { fileContainsJudge, fileExistsJudge, type FileJudgeOptions } from './jury/file-judges.ts';
export { llmJudge, llmJudgePrompt, LLM_JUDGE_ANSWER, type LlmJudgeAnswer, type LlmJudgeGenerate, type LlmJudgeOptions } from './jury/llm-judge.ts';
