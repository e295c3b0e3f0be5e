import { trace, type Attributes, type Span } from '@opentelemetry/api';
import { redact } from '../redaction/redact.ts';
import { meterInstruments } from '../telemetry/instruments.ts';
import { callTelemetry, contentRecordingOf } from '../telemetry/spans.ts';
import { recordsContentByDefault } from '../telemetry/telemetry-options.ts';
import { ATTR_BREAKER_ACTION_LABEL, ATTR_BREAKER_CATEGORY_LABEL } from '../telemetry/semconv.ts';
import type { BreakerEventRecord } from './breaker-events.ts';

const ESCALATION_EVENT = 'governor.breaker.escalation';

/**
 * Context key the `BreakerRecoveryAdvisor` sets (to `{ category, message }`)
 * when it recovers from a stop; the ChatClient call reads it to record the
 * `recover` escalation.
 */
export const BREAKER_RECOVERED = 'governor.breaker.recovered';

function countEscalation(category: string, action: string): void {
  const metrics = meterInstruments();
  if (!metrics.live) return;
  const attributes: Attributes = { [ATTR_BREAKER_CATEGORY_LABEL]: category, [ATTR_BREAKER_ACTION_LABEL]: action };
  metrics.escalations.add(1, attributes);
}

/**
 * OpenTelemetry for breaker events, fed from the same dispatch as the
 * breaker's `on(...)` listeners: a span event on the active span (the
 * AgentBreaker's advisor span inside a ChatClient call) and the
 * `governor.breaker.escalations` counter (attributes `category`, `action`).
 * Inside a ChatClient call both follow that call's settings: nothing at all
 * when its telemetry is off, and the evidence's `detail` (redacted) only when
 * it records content. Outside a call, the process default decides
 * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). Without a
 * registered SDK both are skipped. Instruments are looked up on each use, so
 * an SDK registered after the breaker still receives them.
 */
export class BreakerTelemetry {
  /** Counts an operation the store's failure left unjudged (`governor.breaker.unjudged`), unless the call's telemetry is off. */
  countUnjudged(refused: boolean): void {
    if (callTelemetry()?.enabled === false) return;
    const metrics = meterInstruments();
    if (metrics.live) metrics.unjudged.add(1, { outcome: refused ? 'refused' : 'allowed' });
  }

  record(event: BreakerEventRecord): void {
    const call = callTelemetry();
    // A client with telemetry off adds nothing, not even to the application's span its call runs in.
    if (call?.enabled === false) return;
    const span = trace.getActiveSpan();
    if (event.type === 'escalation') countEscalation(event.category, event.action);
    if (span === undefined) return;
    // Session ids are the caller's (a header, a user name): a secret in one is masked, as in health() and logs.
    const sessionId = redact(event.sessionId);
    if (event.type === 'escalation') {
      const attributes: Attributes = {
        'governor.breaker.session_id': sessionId,
        'governor.breaker.category': event.category,
        'governor.breaker.action': event.action,
      };
      // The detail may quote what the model or a tool said: it is content, recorded only when content is.
      // Its span's mark (an advisor span of the call) decides first, then the call the context belongs to, else the process default.
      if ((contentRecordingOf(span) ?? call?.recordContent ?? recordsContentByDefault()) && event.evidence?.detail)
        attributes['governor.breaker.detail'] = redact(event.evidence.detail);
      span.addEvent(ESCALATION_EVENT, attributes);
    } else {
      const attributes: Attributes = { 'governor.breaker.session_id': sessionId };
      if (event.from !== undefined) attributes['governor.breaker.from'] = event.from;
      if (event.to !== undefined) attributes['governor.breaker.to'] = event.to;
      if (event.category !== undefined) attributes['governor.breaker.category'] = event.category;
      if (event.code !== undefined) attributes['governor.breaker.code'] = event.code;
      // Stop messages, warnings and notes hold no content (see breakerMessage): recorded whatever the content setting.
      attributes['governor.breaker.message'] = redact(event.message);
      span.addEvent(`governor.breaker.${event.type}`, attributes);
    }
  }
}

/**
 * Records the breaker's `recover` escalation: a stop that a
 * `BreakerRecoveryAdvisor` turned into a second attempt. Counted in
 * `governor.breaker.escalations` with `action: recover`, and a span event on
 * `span` (the ChatClient call that recovered).
 */
export function recordBreakerRecovery(sessionId: string, category: string, span: Span | undefined): void {
  try {
    countEscalation(category, 'recover');
    span?.addEvent(ESCALATION_EVENT, {
      'governor.breaker.session_id': redact(sessionId),
      'governor.breaker.category': category,
      'governor.breaker.action': 'recover',
    });
  } catch {
    // Telemetry never breaks the call it observes.
  }
}
