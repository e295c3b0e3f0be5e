/**
 * Credential formats recognised by their shape alone, whatever surrounds them.
 *
 * Ported from the rule set gitleaks publishes (config/gitleaks.toml in
 * github.com/gitleaks/gitleaks, MIT licence): the token shapes of the
 * providers agents most often hold keys for. Where a gitleaks rule anchors on
 * a surrounding keyword (`generic-api-key`, `aws-secret-access-key`), that case
 * is handled by the assignment rule in `redact.ts` instead.
 */
export const TOKEN_RULES: ReadonlyArray<{ readonly id: string; readonly pattern: RegExp }> = [
  { id: 'private-key', pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g },
  { id: 'aws-access-token', pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g },
  { id: 'github-pat', pattern: /\bgh[pousr]_[0-9a-zA-Z]{36,}\b/g },
  { id: 'github-fine-grained-pat', pattern: /\bgithub_pat_\w{22,}/g },
  { id: 'gitlab-pat', pattern: /\bgl(?:pat|ptt|rt|dt|cbt|soat|ffct)-[\w-]{20,}/g },
  { id: 'slack-token', pattern: /\bxox[abeoprs]-(?:\d+-)?[0-9A-Za-z-]{10,}/g },
  { id: 'slack-webhook-url', pattern: /\bhooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{30,}/g },
  { id: 'stripe-access-token', pattern: /\b(?:sk|rk|pk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}\b/g },
  { id: 'anthropic-api-key', pattern: /\bsk-ant-(?:api|admin)\d\d-[\w-]{20,}/g },
  { id: 'openai-api-key', pattern: /\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}/g },
  { id: 'huggingface-access-token', pattern: /\bhf_[A-Za-z0-9]{30,}\b/g },
  { id: 'huggingface-organization-api-token', pattern: /\bapi_org_[A-Za-z0-9]{30,}\b/g },
  { id: 'npm-access-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { id: 'pypi-upload-token', pattern: /\bpypi-AgEIcHlwaS5vcmc[\w-]{50,}/g },
  { id: 'gcp-api-key', pattern: /\bAIza[\w-]{35}\b/g },
  { id: 'sendgrid-api-token', pattern: /\bSG\.[\w-]{22}\.[\w-]{43}\b/g },
  { id: 'twilio-api-key', pattern: /\bSK[0-9a-fA-F]{32}\b/g },
  { id: 'mailgun-private-api-token', pattern: /\bkey-[a-f0-9]{32}\b/g },
  { id: 'docker-pat', pattern: /\bdckr_pat_[\w-]{27,}/g },
  { id: 'digitalocean-token', pattern: /\bdo[opr]_v1_[a-f0-9]{64}\b/g },
  { id: 'shopify-token', pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g },
  { id: 'databricks-api-token', pattern: /\bdapi[a-f0-9]{32}(?:-\d)?\b/g },
  { id: 'grafana-service-account-token', pattern: /\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b/g },
  { id: 'doppler-api-token', pattern: /\bdp\.pt\.[a-z0-9]{43}\b/gi },
  { id: 'age-secret-key', pattern: /\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b/g },
  { id: 'jwt', pattern: /\bey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/_-]{17,}\.(?:[a-zA-Z0-9/_-]{10,}={0,2})?/g },
  { id: 'azure-storage-account-key', pattern: /\b(AccountKey|SharedAccessKey|SharedAccessSignature|sig)=[A-Za-z0-9+/%]{16,}={0,2}/g },
];
