// The types a replay report reaches are named by the package, so code that keeps or renders them can name them too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AgentBreaker,
  ReplaySummaryBuilder,
  replayTrajectory,
  type CategoryTotals,
  type ComparedField,
  type ExplainedIntervention,
  type ExplainedStep,
  type SideBySide,
  type StepPlace,
  type Trajectory,
  type TripExplanation,
} from '../index.ts';

const SPIRAL: Trajectory = {
  id: 'spiral',
  steps: Array.from({ length: 6 }, () => [
    { kind: 'model' as const, prompt_tokens: 100, completion_tokens: 10, text: '' },
    { kind: 'tool_call' as const, tool: 'get_status', args: { job: 'build' }, result: 'queued' },
  ]).flat(),
};

/** What a report of one's own keeps of an explanation, by the exported names. */
function reportOf(explanation: TripExplanation): { place: StepPlace; first: ExplainedIntervention; trip: ExplainedStep; fields: readonly ComparedField[] } {
  const sideBySide: SideBySide | undefined = explanation.sideBySide;
  return {
    place: explanation.place,
    first: explanation.interventions[0]!,
    trip: explanation.steps.find((step) => step.role === 'trip')!,
    fields: sideBySide?.fields ?? [],
  };
}

test("a replay summary's per-category totals and a trip's explanation, by the names the package exports", async () => {
  const builder = new ReplaySummaryBuilder();
  const tripped = builder.add(1, await replayTrajectory(new AgentBreaker({ telemetry: false }), SPIRAL, 'replay'), SPIRAL);
  const totals: Readonly<CategoryTotals> | undefined = builder.build().byCategory.get('tool_spiral');
  assert.equal(totals?.trips, 1);
  assert.ok(tripped?.explanation !== undefined);
  const report = reportOf(tripped.explanation);
  assert.equal(report.first.category, 'tool_spiral');
  assert.equal(report.trip.kind, 'tool_call');
  assert.equal(report.place.when, 'at');
  assert.ok(report.fields.some((field) => field.name !== '' && field.same));
});
