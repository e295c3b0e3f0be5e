import { metrics, trace, type Attributes, type Counter } from '@opentelemetry/api';
import type { BreakerEventRecord } from './breaker-events.ts';

const METER = 'agent-governor';

/**
 * OpenTelemetry for breaker events: a span event on the active span and the
 * `governor.breaker.escalations` counter (attributes `category`, `action`).
 * Without a registered SDK both are the API's no-ops. The counter is created
 * on first use, so an SDK registered after the breaker still receives it.
 */
export class BreakerTelemetry {
  #counter: Counter | undefined;

  record(event: BreakerEventRecord): void {
    const span = trace.getActiveSpan();
    if (event.type === 'escalation') {
      const attributes: Attributes = { category: event.category ?? 'none', action: event.action ?? 'none' };
      this.#counter ??= metrics.getMeter(METER).createCounter('governor.breaker.escalations', {
        description: 'Agent breaker escalations (steer, block, stop) by loop category',
      });
      this.#counter.add(1, attributes);
      span?.addEvent('governor.breaker.escalation', {
        'governor.breaker.session_id': event.sessionId,
        'governor.breaker.category': event.category ?? 'none',
        'governor.breaker.action': event.action ?? 'none',
        'governor.breaker.detail': event.evidence?.detail ?? '',
      });
    } else if (span !== undefined) {
      const attributes: Attributes = { 'governor.breaker.session_id': event.sessionId };
      if (event.from !== undefined) attributes['governor.breaker.from'] = event.from;
      if (event.to !== undefined) attributes['governor.breaker.to'] = event.to;
      if (event.category !== undefined) attributes['governor.breaker.category'] = event.category;
      if (event.message !== undefined) attributes['governor.breaker.message'] = event.message;
      span.addEvent(`governor.breaker.${event.type}`, attributes);
    }
  }
}
