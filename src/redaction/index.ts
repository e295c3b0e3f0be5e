export { redact, redactValue, redactedMessage, redactSecrets, REDACTED } from './redact.ts';
