/**
 * The figures of the detection benchmark, computed from one outcome per
 * (detector, labelled trajectory). Pure functions, so the arithmetic is
 * tested on its own (detection-metrics.test.ts).
 */

/** How one detector did on one labelled trajectory. */
export interface Outcome {
  readonly stuck: boolean;
  /** Label category (stuck trajectories only). */
  readonly category: string | undefined;
  readonly source: string;
  /** The label's confidence (`clear`, `ambiguous`) when the corpus gives one. */
  readonly confidence?: string;
  /** The detector intervened (its first decision that was not `allow`). */
  readonly tripped: boolean;
  /** Step of that first intervention: the step that would not have run as recorded. */
  readonly step: number | undefined;
  /** First `stop` when every steer and block is ignored (stuck trajectories only). */
  readonly stopStep: number | undefined;
  readonly stepsTotal: number;
  readonly firstStuckStep: number | undefined;
  /** Whether the recording carries token counts at all. */
  readonly tokensKnown: boolean;
  /** Tokens of model steps from first_stuck_step up to (not including) the intervention, or to the end. */
  readonly tokensAfterStuck: number;
}

/** One detector's figures over a set of outcomes. */
export interface DetectionFigures {
  readonly trajectories: number;
  readonly stuck: number;
  readonly productive: number;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  readonly trueNegatives: number;
  /** TP / (TP + FP); undefined when the detector never intervened. */
  readonly precision: number | undefined;
  /** TP / stuck trajectories; undefined without stuck trajectories. */
  readonly recall: number | undefined;
  /** Harmonic mean of precision and recall; 0 when it caught nothing; undefined without stuck trajectories. */
  readonly f1: number | undefined;
  /** FP / productive trajectories; undefined without productive trajectories. */
  readonly falsePositiveRate: number | undefined;
  /** Median of (intervention step − first_stuck_step) over caught loops; negative = before the labelled step. */
  readonly medianLag: number | undefined;
  /** 90th percentile (nearest rank) of the same. */
  readonly p90Lag: number | undefined;
  /** Stuck trajectories that reach a hard stop even when every steer and block is ignored. */
  readonly hardStops: number;
  /** Median of (stop step − first_stuck_step) over those. */
  readonly medianStopLag: number | undefined;
  /** Steps run from first_stuck_step until the intervention (or the end of a missed loop), summed. */
  readonly stepsAfterStuck: number;
  /** Same in tokens; undefined when no such step carried a token count. */
  readonly tokensAfterStuck: number | undefined;
  /** {@link tokensAfterStuck} per stuck trajectory. */
  readonly tokensAfterStuckPerStuck: number | undefined;
  /** Steps of productive runs after a false intervention (work that would have been cut off). */
  readonly productiveStepsCut: number;
}

/** Median of `values`; undefined for none. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile (`p` in 0..100) of `values`; undefined for none. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** The figures of one detector over `outcomes`. */
export function summarise(outcomes: readonly Outcome[]): DetectionFigures {
  let tp = 0,
    fp = 0,
    fn = 0,
    tn = 0,
    stepsAfter = 0,
    tokensAfter = 0,
    productiveCut = 0;
  let tokensKnown = false;
  const lags: number[] = [];
  const stopLags: number[] = [];
  for (const o of outcomes) {
    if (o.stuck) {
      const first = o.firstStuckStep ?? 0;
      if (o.tripped && o.step !== undefined) {
        tp++;
        lags.push(o.step - first);
      } else fn++;
      if (o.stopStep !== undefined) stopLags.push(o.stopStep - first);
      const end = o.tripped && o.step !== undefined ? o.step : o.stepsTotal;
      stepsAfter += Math.max(0, end - first);
      tokensAfter += o.tokensAfterStuck;
      tokensKnown ||= o.tokensKnown;
    } else if (o.tripped) {
      fp++;
      productiveCut += Math.max(0, o.stepsTotal - (o.step ?? o.stepsTotal));
    } else tn++;
  }
  const stuck = tp + fn;
  const precision = tp + fp === 0 ? undefined : tp / (tp + fp);
  const recall = stuck === 0 ? undefined : tp / stuck;
  const f1 = recall === undefined ? undefined : tp === 0 ? 0 : (2 * (precision as number) * recall) / ((precision as number) + recall);
  return {
    trajectories: outcomes.length,
    stuck,
    productive: fp + tn,
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    trueNegatives: tn,
    precision,
    recall,
    f1,
    falsePositiveRate: fp + tn === 0 ? undefined : fp / (fp + tn),
    medianLag: median(lags),
    p90Lag: percentile(lags, 90),
    hardStops: stopLags.length,
    medianStopLag: median(stopLags),
    stepsAfterStuck: stepsAfter,
    tokensAfterStuck: tokensKnown ? tokensAfter : undefined,
    tokensAfterStuckPerStuck: tokensKnown && stuck > 0 ? tokensAfter / stuck : undefined,
    productiveStepsCut: productiveCut,
  };
}

/**
 * Figures per group of trajectories: per `source`, everything from that source;
 * per `category`, the stuck runs of that category only (a productive run has no
 * category, so only recall, lags and tokens mean something there).
 */
export function summariseBy(outcomes: readonly Outcome[], key: 'category' | 'source' | 'confidence'): Record<string, DetectionFigures> {
  const groups = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    if (key === 'category' && !o.stuck) continue;
    const name = key === 'category' ? (o.category ?? 'other') : key === 'source' ? o.source : (o.confidence ?? '(none)');
    let group = groups.get(name);
    if (group === undefined) groups.set(name, (group = []));
    group.push(o);
  }
  const result: Record<string, DetectionFigures> = {};
  for (const name of [...groups.keys()].sort()) result[name] = summarise(groups.get(name) as Outcome[]);
  return result;
}
