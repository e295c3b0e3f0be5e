import { redact } from '../redaction/redact.ts';

/**
 * Names that commonly hold credentials. Matching is deliberately broad: losing
 * a harmless variable costs little, leaking a key to a model-driven shell a lot.
 */
const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|JWT|(?:^|_)(?:PASS|PWD|PW|SIG|SAS)$|_DSN$|^DATABASE_URL$|_DATABASE_URL$|^REDIS_URL$|^MONGO\w*_(?:URI|URL)$|CONNECTION_?STRING/i;

/** Whole families of well-known credential-bearing variables. */
const SECRET_PREFIX =
  /^(?:AWS_|AZURE_|GOOGLE_|GCLOUD_|GCP_|OPENAI_|ANTHROPIC_|GH_|GITHUB_|GITLAB_|NPM_CONFIG_|HF_|HUGGING_FACE_|COHERE_|MISTRAL_|GROQ_|DEEPSEEK_|XAI_|VERCEL_|AI_GATEWAY_|PG|MYSQL_|DOCKER_|KUBE|VAULT_|SLACK_|STRIPE_|TWILIO_|SENTRY_)/i;

/** Matched by the patterns above but harmless and useful to tools such as git. */
const KNOWN_SAFE = new Set(['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE']);

// A URL with a password in it (`postgres://user:pass@host`) is a secret whatever its name.
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:\S+@/i;

/** Whether a variable named `name` with `value` should be kept from commands by default. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  if (KNOWN_SAFE.has(name)) return false;
  if (SECRET_NAME.test(name) || SECRET_PREFIX.test(name)) return true;
  if (value === undefined) return false;
  // Whatever the name, a value that redaction would touch (a known token shape,
  // a password in a URL or in a connection string) is a credential.
  return URL_WITH_PASSWORD.test(value) || redact(value) !== value;
}

/**
 * A copy of `env` without the variables {@link isSecretVariable} flags. It is a
 * name-based filter: a credential stored under an innocent name gets through,
 * so pass explicit variables rather than relying on it for secrets you know of.
 */
export function withoutSecrets(env: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretVariable(name, value)) kept[name] = value;
  }
  return kept;
}
