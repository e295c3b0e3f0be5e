export type {
  DelegationStep,
  ModelStep,
  RetrievalStep,
  StepKind,
  ToolCallStep,
  Trajectory,
  TrajectoryLabel,
  TrajectoryStep,
  UserStep,
} from './trajectory.ts';
export { STEP_KINDS } from './trajectory.ts';
export { parseTrajectory, parseTrajectoryLine, TrajectoryFormatError } from './parse-trajectory.ts';
export type { ParseTrajectoryOptions } from './parse-trajectory.ts';
export { isMalformedLine, readTrajectories } from './read-trajectories.ts';
export type { MalformedLine, ReadTrajectoriesOptions, TrajectoryLine, TrajectoryRecord } from './read-trajectories.ts';
export { DEFAULT_MAX_LINE_BYTES } from './read-trajectories.ts';
export { replayTrajectory, toBreakerEvent } from './replay.ts';
export type { ReplayIntervention, ReplayOutput, ReplayResult } from './replay.ts';
export type { ReplayableBreaker, ReplayDecision } from './replayable-breaker.ts';
export { REPLAY_USAGE, runReplayCommand } from './replay-command.ts';
export type { ReplayCommandDependencies, ReplayIo, ReplayOutputStream } from './replay-command.ts';
export { formatSummary, ReplaySummaryBuilder } from './replay-summary.ts';
export type { CategoryTotals, ReplaySummary, TrippedTrajectory } from './replay-summary.ts';
export type { ComparedField, ExplainedIntervention, ExplainedStep, SideBySide, StepPlace, TripExplanation } from './trip-explanation.ts';
export { renderHtmlReport } from './html-report.ts';
export type { HtmlReportOptions } from './html-report.ts';
