import { redact } from '../redaction/redact.ts';

/**
 * Names that commonly hold credentials. Matching is deliberately broad: losing
 * a harmless variable costs little, leaking a key to a model-driven shell a lot.
 * Words anywhere in the name (`GPG_PASSPHRASE`, `STRIPE_SIGNING_SECRET`,
 * `DISCORD_WEBHOOK_URL`, `BW_SESSION`, `AWS_SESSION_TOKEN`, `SSH_PRIVATE_KEY`),
 * and short words only as a whole word (`DB_PASS`, `REGISTRY_CREDS`,
 * `SENTRY_DSN`, `ADO_PAT`, `NPM_OTP`, `TEAMS_HOOK_URL`), so that `COMPASS` or
 * `PATH` are kept.
 */
const SECRET_NAME =
  /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|JWT|WEBHOOK|BEARER|MNEMONIC|SERVICE_?ACCOUNT|CONNECTION_?STRING|CONN_?STR|(?:^|_)(?:PASS|PWD|PW|PIN|SIG|SAS|CREDS?|DSN|PAT|OTP|TOTP|SALT|HMAC|HOOK)(?:_|$)|^DATABASE_URL$|_DATABASE_URL$|^REDIS_URL$|^MONGO\w*_(?:URI|URL)$/i;

/** Whole families of well-known credential-bearing variables. */
const SECRET_PREFIX =
  /^(?:AWS_|AZURE_|GOOGLE_|GCLOUD_|GCP_|OPENAI_|ANTHROPIC_|GH_|GITHUB_|GITLAB_|NPM_CONFIG_|HF_|HUGGING_FACE_|COHERE_|MISTRAL_|GROQ_|DEEPSEEK_|XAI_|VERCEL_|AI_GATEWAY_|PG|MYSQL_|DOCKER_|KUBE|VAULT_|SLACK_|STRIPE_|TWILIO_|SENTRY_|DISCORD_|TELEGRAM_|CLOUDFLARE_|DIGITALOCEAN_|HEROKU_|NETLIFY_|SUPABASE_|FIREBASE_|TWINE_|NUGET_|ARTIFACTORY_|SONATYPE_|OSSRH_|SIGNING_)/i;

/** Matched by the patterns above but harmless and useful to tools such as git and the shell. */
const KNOWN_SAFE = new Set(['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE', 'PWD']);

// A URL with a password in it (`postgres://user:pass@host`) is a secret whatever its name.
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:\S+@/i;

/** Query parameters that carry a credential (`?token=`, `?key=`, signed S3, GCS and Azure SAS URLs). */
const SECRET_QUERY_PARAMETER =
  /^(?:token|access_?token|id_?token|refresh_?token|api_?key|apikey|key|secret|client_?secret|sig|signature|password|passwd|pwd|pass|auth|code|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)$/i;

/**
 * Whether `value` is a URL that is a credential by itself: one whose user
 * name is a token (`https://ghp_…@github.com/…`, a Sentry DSN
 * `https://<key>@o1.ingest.sentry.io/1`), a webhook (Discord, Slack, Teams,
 * Google Chat, Zapier: anything with `webhook`, or a `hooks.` host, or a
 * `/hooks/` path), a Telegram bot URL (`/bot<id>:<token>/`), or one carrying
 * a token, key or signature in its query.
 */
function isCredentialUrl(value: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.password !== '' || url.username.length >= 16) return true;
  if (/webhook/i.test(value) || /(?:^|\.)hooks?\./i.test(url.hostname) || /\/hooks?\//i.test(url.pathname)) return true;
  if (/^\/bot\d+:[\w-]{20,}/.test(url.pathname)) return true;
  for (const name of url.searchParams.keys()) if (SECRET_QUERY_PARAMETER.test(name)) return true;
  return false;
}

/** Whether a variable named `name` with `value` should be kept from commands by default. */
export function isSecretVariable(name: string, value: string | undefined): boolean {
  if (KNOWN_SAFE.has(name)) return false;
  if (SECRET_NAME.test(name) || SECRET_PREFIX.test(name)) return true;
  if (value === undefined) return false;
  // Whatever the name, a value that redaction would touch (a known token shape,
  // a password in a URL or in a connection string), or a URL that is a
  // credential by itself (a webhook, a signed URL), is a credential.
  return URL_WITH_PASSWORD.test(value) || isCredentialUrl(value.trim()) || redact(value) !== value;
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
