/**
 * Detection benchmark: replays a labelled trajectory corpus through our
 * AgentBreaker and through re-implementations of the peers' published rules,
 * in one run, with one replay loop (so every detector is judged by the same
 * notion of "the step that would not have run"). Nothing here is tuned to the
 * corpus: every detector runs with its published defaults.
 */
import path from 'node:path';
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

/** A detector under test; `create` gives a fresh instance for one session. */
export interface DetectorSpec {
  readonly name: string;
  readonly create: () => ReplayableBreaker;
}

/** Our breaker with its defaults, then the peers with theirs. */
export function defaultDetectors(): DetectorSpec[] {
  return [
    { name: 'Governor AgentBreaker (defaults)', create: () => new AgentBreaker() },
    { name: 'Gemini CLI loop detection', create: () => new GeminiCliLoopDetection() },
    { name: 'OpenHands StuckDetector', create: () => new OpenHandsStuckDetector() },
    { name: 'Roo Code repetition limit (3)', create: () => new RooCodeToolRepetition(3) },
    { name: 'Seed SpringAgentBreaker defaults', create: () => new SeedSpringAgentBreaker() },
    { name: 'Step cap: 30 model calls', create: () => new StepCap(30) },
    { name: 'Step cap: 50 model calls', create: () => new StepCap(50) },
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

/** How one detector did on one labelled trajectory. */
interface Outcome {
  readonly stuck: boolean;
  readonly tripped: boolean;
  readonly step: number | undefined;
  /** First `stop` when steers and blocks are ignored. */
  readonly stopStep: number | undefined;
  readonly stepsTotal: number;
  readonly firstStuckStep: number | undefined;
  readonly tokensKnown: boolean;
  /** Tokens of model steps from `firstStuckStep` up to (not including) where the detector stopped the run. */
  readonly tokensAfterDetectable: number;
}

/** Per-detector figures. */
export interface DetectorResult {
  readonly name: string;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly trueNegatives: number;
  /** TP / (TP + FP); undefined when the detector never tripped. */
  readonly precision: number | undefined;
  /** TP / stuck trajectories. */
  readonly recall: number | undefined;
  /** FP / productive trajectories. */
  readonly falsePositiveRate: number | undefined;
  /** Median of (trip step − first_stuck_step) over caught loops; negative = earlier than the label. */
  readonly medianLeadLag: number | undefined;
  /** Stuck trajectories that reached a hard stop even with every steer and block ignored. */
  readonly stopped: number;
  /** Median of (stop step − first_stuck_step) over those. */
  readonly medianStopLeadLag: number | undefined;
  /** Steps that ran from first_stuck_step until the detector stopped the run (or the run ended), summed over stuck trajectories. */
  readonly stepsAfterDetectable: number;
  /** Same in tokens; undefined when the corpus has no token counts. */
  readonly tokensAfterDetectable: number | undefined;
  /** Steps of productive runs that the detector would have cut off. */
  readonly productiveStepsCut: number;
}

/** The whole benchmark outcome. */
export interface DetectionReport {
  readonly corpus: string;
  readonly trajectories: number;
  readonly stuck: number;
  readonly productive: number;
  readonly unlabelled: number;
  readonly malformedLines: number;
  /** Steps after first_stuck_step with no detector at all (the baseline). */
  readonly stepsAfterDetectableWithout: number;
  readonly tokensAfterDetectableWithout: number | undefined;
  readonly detectors: readonly DetectorResult[];
}

function tokensOf(trajectory: Trajectory, from: number, to: number): { tokens: number; known: boolean } {
  let tokens = 0;
  let known = false;
  trajectory.steps.forEach((step, i) => {
    if (step.kind !== 'model' || i < from || i >= to) return;
    if (step.prompt_tokens !== null || step.completion_tokens !== null) known = true;
    tokens += (step.prompt_tokens ?? 0) + (step.completion_tokens ?? 0);
  });
  return { tokens, known };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function summarise(name: string, outcomes: readonly Outcome[]): DetectorResult {
  let tp = 0, fp = 0, fn = 0, tn = 0, stepsAfter = 0, tokensAfter = 0, productiveCut = 0;
  let tokensKnown = false;
  const leadLag: number[] = [];
  const stopLeadLag: number[] = [];
  for (const o of outcomes) {
    if (o.stuck && o.stopStep !== undefined) stopLeadLag.push(o.stopStep - (o.firstStuckStep ?? 0));
    if (o.stuck) {
      if (o.tripped) tp++;
      else fn++;
      const first = o.firstStuckStep ?? 0;
      const stoppedAt = o.tripped && o.step !== undefined ? o.step : o.stepsTotal;
      stepsAfter += Math.max(0, stoppedAt - first);
      tokensAfter += o.tokensAfterDetectable;
      if (o.tokensKnown) tokensKnown = true;
      if (o.tripped && o.step !== undefined) leadLag.push(o.step - first);
    } else {
      if (o.tripped) {
        fp++;
        productiveCut += Math.max(0, o.stepsTotal - (o.step ?? o.stepsTotal));
      } else tn++;
    }
  }
  return {
    name,
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    trueNegatives: tn,
    precision: tp + fp === 0 ? undefined : tp / (tp + fp),
    recall: tp + fn === 0 ? undefined : tp / (tp + fn),
    falsePositiveRate: fp + tn === 0 ? undefined : fp / (fp + tn),
    medianLeadLag: median(leadLag),
    stopped: stopLeadLag.length,
    medianStopLeadLag: median(stopLeadLag),
    stepsAfterDetectable: stepsAfter,
    tokensAfterDetectable: tokensKnown ? tokensAfter : undefined,
    productiveStepsCut: productiveCut,
  };
}

/** Runs every detector over every labelled trajectory of `corpusPath`. */
export async function runDetectionBenchmark(
  corpusPath: string,
  detectors: readonly DetectorSpec[] = defaultDetectors(),
): Promise<DetectionReport> {
  const outcomes = detectors.map(() => [] as Outcome[]);
  let trajectories = 0, stuck = 0, productive = 0, unlabelled = 0, malformed = 0;
  let baselineSteps = 0, baselineTokens = 0, baselineKnown = false;

  for await (const record of readTrajectories(corpusPath)) {
    if (isMalformedLine(record)) {
      malformed++;
      process.stderr.write(`detection bench: line ${record.lineNumber}: ${record.error}\n`);
      continue;
    }
    const t = record.trajectory;
    trajectories++;
    if (t.label === undefined) {
      unlabelled++;
      continue;
    }
    const isStuck = t.label.stuck;
    const first = isStuck ? (t.label.first_stuck_step ?? 0) : undefined;
    if (isStuck) {
      stuck++;
      baselineSteps += Math.max(0, t.steps.length - (first ?? 0));
      const base = tokensOf(t, first ?? 0, t.steps.length);
      baselineTokens += base.tokens;
      baselineKnown ||= base.known;
    } else productive++;

    for (let d = 0; d < detectors.length; d++) {
      const spec = detectors[d] as DetectorSpec;
      const result = await replayTrajectory(spec.create(), t, `bench-${record.lineNumber}`);
      const stopStep = isStuck ? await firstStop(spec.create(), t, `bench-stop-${record.lineNumber}`) : undefined;
      const out = result.output;
      const stoppedAt = out.tripped && out.step !== undefined ? out.step : t.steps.length;
      const after = first === undefined ? { tokens: 0, known: false } : tokensOf(t, first, stoppedAt);
      (outcomes[d] as Outcome[]).push({
        stuck: isStuck,
        tripped: out.tripped,
        step: out.step,
        stopStep,
        stepsTotal: out.steps_total,
        firstStuckStep: first,
        tokensKnown: after.known,
        tokensAfterDetectable: after.tokens,
      });
    }
  }

  return {
    corpus: corpusPath,
    trajectories,
    stuck,
    productive,
    unlabelled,
    malformedLines: malformed,
    stepsAfterDetectableWithout: baselineSteps,
    tokensAfterDetectableWithout: baselineKnown ? baselineTokens : undefined,
    detectors: detectors.map((spec, d) => summarise(spec.name, outcomes[d] as Outcome[])),
  };
}

function ratio(value: number | undefined): string {
  return value === undefined ? 'n/a' : value.toFixed(2);
}

function signed(value: number | undefined): string {
  if (value === undefined) return 'n/a';
  const rounded = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return value > 0 ? `+${rounded}` : rounded;
}

/** The benchmark as one aligned text table plus the notes needed to read it. */
export function formatDetectionReport(report: DetectionReport): string {
  const header = [
    'Detector', 'TP', 'FP', 'FN', 'TN', 'Precision', 'Recall', 'FPR', 'Lead/lag', 'Hard stops', 'Stop lead/lag',
    'Steps after detectable', 'Tokens after', 'Productive steps cut',
  ];
  const rows = report.detectors.map((d) => [
    d.name,
    String(d.truePositives),
    String(d.falsePositives),
    String(d.falseNegatives),
    String(d.trueNegatives),
    ratio(d.precision),
    ratio(d.recall),
    ratio(d.falsePositiveRate),
    signed(d.medianLeadLag),
    `${d.stopped}/${d.truePositives + d.falseNegatives}`,
    signed(d.medianStopLeadLag),
    String(d.stepsAfterDetectable),
    d.tokensAfterDetectable === undefined ? 'unknown' : String(d.tokensAfterDetectable),
    String(d.productiveStepsCut),
  ]);
  rows.push([
    '(no detector)', '0', '0', String(report.stuck), String(report.productive), 'n/a', '0.00', '0.00', 'n/a', `0/${report.stuck}`, 'n/a',
    String(report.stepsAfterDetectableWithout),
    report.tokensAfterDetectableWithout === undefined ? 'unknown' : String(report.tokensAfterDetectableWithout),
    '0',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [
    `Detection benchmark — ${path.basename(report.corpus)}: ${report.trajectories} trajectories ` +
      `(${report.stuck} stuck, ${report.productive} productive` +
      `${report.unlabelled ? `, ${report.unlabelled} unlabelled skipped` : ''}` +
      `${report.malformedLines ? `, ${report.malformedLines} malformed lines` : ''})`,
    '',
    line(header),
    line(header.map((_, i) => '-'.repeat(widths[i] ?? 0))),
    ...rows.map(line),
    '',
    'TP/FP/FN/TN: stuck or productive label vs. whether the detector intervened (first non-allow decision: steer, block',
    'or stop). FPR: share of productive trajectories interrupted. Lead/lag: median of (intervention step −',
    'first_stuck_step) over caught loops; negative = before the labelled point. Hard stops / stop lead/lag: the same for',
    'the first `stop`, replaying on as if every steer and block had been ignored (peers stop at once, so theirs equal',
    'the first intervention). Steps after detectable: steps run from first_stuck_step until the first intervention (or',
    'the end of the run), summed over stuck trajectories. Productive steps cut: steps of productive runs after a',
    'false intervention. Tokens: the corpus has no token counts.',
  ].join('\n');
}
