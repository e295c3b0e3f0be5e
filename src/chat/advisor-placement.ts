import { GovernorError } from '../errors/governor-error.ts';
import type { Advisor } from './advisor.ts';

/**
 * What an advisor says about where it must sit. `'once-per-call'` advisors
 * (chat memory) must run outside every `'tool-loop'` advisor: inside it they
 * would read the history into every round and store half-finished turns.
 * `'outermost'` advisors (`BreakerRecoveryAdvisor`) must run outside both: a
 * call they retry goes through the memory and the tool loop anew.
 * `'per-round'` advisors (`StructuredOutputValidationAdvisor`) must run
 * inside every tool loop: outside it, each call they repeat would run the
 * whole loop again, its tools included.
 */
export type AdvisorPlacement = 'once-per-call' | 'tool-loop' | 'outermost' | 'per-round';

/** Property an advisor sets to declare its {@link AdvisorPlacement}. */
export const ADVISOR_PLACEMENT = Symbol.for('agent-governor.advisorPlacement');

/** An advisor that declares its placement. */
export interface PlacedAdvisor extends Advisor {
  readonly [ADVISOR_PLACEMENT]: AdvisorPlacement;
}

/** The placement `advisor` declares, if any. */
export function placementOf(advisor: Advisor): AdvisorPlacement | undefined {
  return (advisor as Partial<PlacedAdvisor>)[ADVISOR_PLACEMENT];
}

/**
 * An advisor is ordered inside one it must run outside of: a once-per-call
 * advisor (chat memory) inside the tool loop, or an outermost one
 * (`BreakerRecoveryAdvisor`) inside a memory advisor or the tool loop; or
 * a per-round one (`StructuredOutputValidationAdvisor`) outside the tool loop.
 */
export class AdvisorPlacementError extends GovernorError {
  declare readonly code: 'GOVERNOR_ADVISOR_PLACEMENT';
  readonly advisor: string;
  /**
   * The advisor it runs inside of: the tool loop, or for an outermost advisor
   * a memory advisor or the tool loop. For a per-round advisor, the tool loop
   * it runs outside of.
   */
  readonly toolLoop: string;

  constructor(advisor: Advisor, toolLoop: Advisor) {
    super(
      'GOVERNOR_ADVISOR_PLACEMENT',
      placementOf(advisor) === 'per-round'
        ? `${advisor.name} (order ${advisor.order}) runs outside ${toolLoop.name} (order ${toolLoop.order}), so each call it repeats ` +
            `would run the whole tool loop again, its tools included, without the results of the first. Give it an order above ` +
            `${toolLoop.order}: leave its default (AdvisorOrder.VALIDATION).`
        : placementOf(advisor) === 'outermost'
          ? `${advisor.name} (order ${advisor.order}) runs inside ${toolLoop.name} (order ${toolLoop.order}), so the call it retries ` +
            `would not go through ${toolLoop.name} again: the retry would miss the summary it leaves in memory, or never see the stop. ` +
            `Give it an order below ${toolLoop.order}: leave its default (AdvisorOrder.MEMORY - 1).`
          : `${advisor.name} (order ${advisor.order}) runs inside ${toolLoop.name} (order ${toolLoop.order}), so it would read and write the ` +
            `conversation on every tool round and store half-finished turns. Give it an order below ${toolLoop.order}: ` +
            `leave its default (AdvisorOrder.MEMORY), or set e.g. order: AdvisorOrder.MEMORY. Spring AI's ` +
            `HIGHEST_PRECEDENCE + n orders for memory map to AdvisorOrder.MEMORY + n here.`,
    );
    this.advisor = advisor.name;
    this.toolLoop = toolLoop.name;
  }
}

/**
 * Refuses a chain (sorted outermost first) in which a once-per-call advisor
 * comes after a tool-loop advisor, an outermost one after either, or a
 * per-round one before a tool-loop advisor.
 * @throws AdvisorPlacementError naming both advisors and where to put the first
 */
export function checkAdvisorPlacement(sorted: readonly Advisor[]): void {
  let loop: Advisor | undefined;
  let placed: Advisor | undefined;
  let perRound: Advisor | undefined;
  for (const advisor of sorted) {
    const placement = placementOf(advisor);
    if (placement === 'per-round') {
      if (loop === undefined) perRound ??= advisor;
      continue;
    }
    if (placement === 'outermost') {
      if (placed !== undefined) throw new AdvisorPlacementError(advisor, placed);
      continue;
    }
    if (placement !== undefined) placed ??= advisor;
    if (placement === 'tool-loop') {
      if (perRound !== undefined) throw new AdvisorPlacementError(perRound, advisor);
      loop ??= advisor;
    } else if (placement === 'once-per-call' && loop !== undefined) throw new AdvisorPlacementError(advisor, loop);
  }
}
