// OpenTelemetry settings
export { TELEMETRY, type TelemetryOptions } from './telemetry-options.ts';
export { INSTRUMENTATION_SCOPE } from './instruments.ts';
export type { ToolCallOutcome } from '../chat/tool-call-observation.ts';

// Health
export { health, type BreakerHealthSource, type ComponentHealth, type HealthOptions, type HealthReport, type HealthStatus } from './health.ts';
export { healthHandler, type HealthHandler } from './health-handler.ts';
