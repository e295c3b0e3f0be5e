/**
 * Detection benchmark: replays a labelled trajectory corpus through our
 * AgentBreaker and through re-implementations of the peers' published rules,
 * in one run, with one replay loop (so every detector is judged by the same
 * notion of "the step that would not have run"). Nothing here is tuned to the
 * corpus: every detector runs with its published defaults.
 */
import { AgentBreaker } from '../src/breaker/agent-breaker.ts';
import { isMalformedLine, readTrajectories } from '../src/replay/read-trajectories.ts';
import { replayTrajectory, toBreakerEvent } from '../src/replay/replay.ts';
import type { ReplayableBreaker } from '../src/replay/replayable-breaker.ts';
import type { Trajectory } from '../src/replay/trajectory.ts';
import { GeminiCliLoopDetection } from './peers/gemini-cli.ts';
import { OpenHandsStuckDetector } from './peers/openhands.ts';
import { RooCodeToolRepetition } from './peers/roo-code.ts';
import { SeedSpringAgentBreaker } from './peers/seed-spring-agent-breaker.ts';
import { StepCap } from './peers/step-cap.ts';
import { labelConfidence } from './label-confidence.ts';
import { asToolCalls } from './tool-call-view.ts';
import { summarise, summariseBy, type DetectionFigures, type Outcome } from './detection-metrics.ts';

/** A detector under test; `create` gives a fresh instance for one session. */
export interface DetectorSpec {
  readonly name: string;
  readonly create: () => ReplayableBreaker;
  /**
   * `tool_calls`: the detector's framework has no retrieval or delegation
   * events, so it sees those steps as the tool calls they are there (see
   * tool-call-view.ts). Default: every step as recorded.
   */
  readonly view?: 'steps' | 'tool_calls';
}

/** Our breaker with its defaults, then the peers with theirs. */
function defaultDetectors(): DetectorSpec[] {
  return [
    { name: 'Governor AgentBreaker (defaults)', create: () => new AgentBreaker() },
    { name: 'Gemini CLI loop detection', create: () => new GeminiCliLoopDetection(), view: 'tool_calls' },
    { name: 'OpenHands StuckDetector', create: () => new OpenHandsStuckDetector(), view: 'tool_calls' },
    { name: 'Roo Code / Cline (3 identical calls)', create: () => new RooCodeToolRepetition(3), view: 'tool_calls' },
    { name: 'Seed SpringAgentBreaker defaults', create: () => new SeedSpringAgentBreaker() },
    { name: 'Step cap: 15 model calls', create: () => new StepCap(15) },
    { name: 'Step cap: 25 model calls', create: () => new StepCap(25) },
  ];
}

/**
 * The step at which a breaker would have ended the run if the agent ignored
 * every steer and block (the recording goes on as it happened): its first
 * `stop`. A blocked call is not observed, as it would not have run. The same
 * step indexing as replay: a check names its own step, an observation the next.
 */
async function firstStop(breaker: ReplayableBreaker, trajectory: Trajectory, sessionId: string): Promise<number | undefined> {
  const steps = trajectory.steps;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i];
    if (step === undefined) break;
    let blocked = false;
    if (step.kind === 'model') {
      const gate = await breaker.checkModelCall(sessionId);
      if (gate.action === 'stop') return i;
    } else if (step.kind === 'tool_call') {
      const check = await breaker.checkToolCall(sessionId, { tool: step.tool, args: step.args });
      if (check.action === 'stop') return i;
      blocked = check.action === 'block';
    }
    if (blocked) continue;
    const after = await breaker.observe(sessionId, toBreakerEvent(step));
    if (after.action === 'stop') return i + 1;
  }
  return undefined;
}

/** One detector's figures: overall, per label category, per source. */
export interface DetectorReport {
  readonly name: string;
  readonly overall: DetectionFigures;
  /** Stuck runs of each category (recall, lags, tokens). */
  readonly byCategory: Readonly<Record<string, DetectionFigures>>;
  /** Every run of each source. */
  readonly bySource: Readonly<Record<string, DetectionFigures>>;
  /** Every run of each label confidence (`clear`, `ambiguous`), when the corpus says. */
  readonly byConfidence: Readonly<Record<string, DetectionFigures>>;
}

/** The whole benchmark outcome. */
export interface DetectionReport {
  readonly corpora: readonly string[];
  /** Labelled trajectories judged. */
  readonly trajectories: number;
  readonly stuck: number;
  readonly productive: number;
  /** Trajectories without a label (skipped). */
  readonly unlabelled: number;
  readonly malformedLines: number;
  readonly detectors: readonly DetectorReport[];
  /** The same figures with no detector at all: every loop runs to the end of its recording. */
  readonly baseline: DetectorReport;
}

/** A control that never intervenes: what the loops cost when nothing stops them. */
class NoDetector implements ReplayableBreaker {
  async checkModelCall(): Promise<{ action: 'allow' }> {
    return { action: 'allow' };
  }
  async checkToolCall(): Promise<{ action: 'allow' }> {
    return { action: 'allow' };
  }
  async observe(): Promise<{ action: 'allow' }> {
    return { action: 'allow' };
  }
}

function tokensOf(trajectory: Trajectory, from: number, to: number): { tokens: number; known: boolean } {
  let tokens = 0;
  let known = false;
  trajectory.steps.forEach((step, i) => {
    if (step.kind !== 'model') return;
    // Known means the recording counts tokens at all, even when no step falls in the range.
    if (step.prompt_tokens !== null || step.completion_tokens !== null) known = true;
    if (i >= from && i < to) tokens += (step.prompt_tokens ?? 0) + (step.completion_tokens ?? 0);
  });
  return { tokens, known };
}

/** How one detector does on one labelled trajectory (a fresh instance per trajectory). */
export async function judge(spec: DetectorSpec, recorded: Trajectory, session: string, confidence?: string): Promise<Outcome> {
  const t = spec.view === 'tool_calls' ? asToolCalls(recorded) : recorded;
  const label = t.label;
  const stuck = label?.stuck === true;
  const first = stuck ? (label?.first_stuck_step ?? 0) : undefined;
  const { output } = await replayTrajectory(spec.create(), t, session);
  const end = output.tripped && output.step !== undefined ? output.step : t.steps.length;
  const after = first === undefined ? { tokens: 0, known: false } : tokensOf(t, first, end);
  return {
    stuck,
    category: stuck ? (label?.category ?? 'other') : undefined,
    source: t.source ?? '(no source)',
    ...(confidence !== undefined ? { confidence } : {}),
    tripped: output.tripped,
    step: output.step,
    stopStep: stuck ? await firstStop(spec.create(), t, `${session}-stop`) : undefined,
    stepsTotal: t.steps.length,
    firstStuckStep: first,
    tokensKnown: after.known,
    tokensAfterStuck: after.tokens,
  };
}

function report(name: string, outcomes: readonly Outcome[]): DetectorReport {
  return {
    name,
    overall: summarise(outcomes),
    byCategory: summariseBy(outcomes, 'category'),
    bySource: summariseBy(outcomes, 'source'),
    byConfidence: summariseBy(
      outcomes.filter((o) => o.confidence !== undefined),
      'confidence',
    ),
  };
}

/** Progress while the corpus is replayed: trajectories done so far. */
export type DetectionProgress = (done: number) => void;

/**
 * Replays every labelled trajectory of `corpusPaths` through every detector,
 * each on a fresh instance. Malformed lines are counted and reported on
 * stderr by line number; the rest of the file still runs.
 */
export async function runDetectionBenchmark(
  corpusPaths: readonly string[],
  detectors: readonly DetectorSpec[] = defaultDetectors(),
  onProgress?: DetectionProgress,
): Promise<DetectionReport> {
  const outcomes = detectors.map(() => [] as Outcome[]);
  const baseline: Outcome[] = [];
  const control: DetectorSpec = { name: '(no detector)', create: () => new NoDetector() };
  let unlabelled = 0,
    malformed = 0,
    done = 0;

  for (const [fileIndex, corpusPath] of corpusPaths.entries()) {
    const confidence = await labelConfidence(corpusPath);
    for await (const record of readTrajectories(corpusPath)) {
      if (isMalformedLine(record)) {
        malformed++;
        process.stderr.write(`${corpusPath}: line ${record.lineNumber}: ${record.error}\n`);
        continue;
      }
      const t = record.trajectory;
      if (t.label === undefined) {
        unlabelled++;
        continue;
      }
      const session = `bench-${fileIndex}-${record.lineNumber}`;
      const sure = confidence.get(record.lineNumber);
      for (const [d, spec] of detectors.entries()) (outcomes[d] as Outcome[]).push(await judge(spec, t, session, sure));
      baseline.push(await judge(control, t, session, sure));
      onProgress?.(++done);
    }
  }

  const overall = summarise(baseline);
  return {
    corpora: corpusPaths,
    trajectories: overall.trajectories,
    stuck: overall.stuck,
    productive: overall.productive,
    unlabelled,
    malformedLines: malformed,
    detectors: detectors.map((spec, d) => report(spec.name, outcomes[d] as Outcome[])),
    baseline: report(control.name, baseline),
  };
}
