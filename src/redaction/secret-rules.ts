/** An AWS access key id: the prefix of its kind, then 16 characters of base32. */
const AWS_ACCESS_KEY_ID = '(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}';

/**
 * An AWS access key id and, right after it, its secret access key, as the
 * console's credentials CSV (`AKIA…,wJal…`) and tables of keys hold them:
 * the secret has no shape of its own but 40 characters of base64. Group 2 is
 * what separates them, group 3 the secret; one without both cases of letter
 * (a git SHA after a key id) is none.
 */
export const AWS_KEY_PAIR = new RegExp(String.raw`(?<![A-Za-z0-9])(${AWS_ACCESS_KEY_ID})([ \t]*[,;|:][ \t]*|[ \t]+)([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])`, 'g');

/**
 * Credential formats recognised by their shape alone, whatever surrounds them.
 *
 * Ported from the rule set gitleaks publishes (config/gitleaks.toml in
 * github.com/gitleaks/gitleaks, MIT licence): the token shapes of the
 * providers agents most often hold keys for. Where a gitleaks rule anchors on
 * a surrounding keyword (`generic-api-key`, `aws-secret-access-key`), that case
 * is handled by the assignment rule in `redact.ts` instead.
 *
 * A token ends where letters and digits end, not at a word boundary (`\b`):
 * `_` is a word character, so `\b` missed a token joined to its neighbours by
 * underscores (`push_ghp_…`, `…_sk-proj-…_backup`), as names and branch
 * names often join them. Nor does a token start right after a letter or digit,
 * unless they end a percent escape: in URL-encoded text a token follows its
 * encoded quote or separator (`%22sk-…`, `%3Dghp_…`).
 */
export const TOKEN_RULES: ReadonlyArray<{ readonly id: string; readonly pattern: RegExp }> = afterPercentEscapes([
  { id: 'private-key', pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g },
  { id: 'aws-access-token', pattern: new RegExp(`(?<![A-Za-z0-9])${AWS_ACCESS_KEY_ID}(?![A-Za-z0-9])`, 'g') },
  { id: 'github-pat', pattern: /(?<![A-Za-z0-9])gh[pousr]_[0-9a-zA-Z]{36,}(?![A-Za-z0-9])/g },
  { id: 'github-fine-grained-pat', pattern: /(?<![A-Za-z0-9])github_pat_\w{22,}/g },
  { id: 'gitlab-pat', pattern: /(?<![A-Za-z0-9])gl(?:pat|ptt|rt|dt|cbt|soat|ffct)-[\w-]{20,}/g },
  { id: 'slack-token', pattern: /(?<![A-Za-z0-9])xox[abeoprs]-(?:\d+-)?[0-9A-Za-z-]{10,}/g },
  { id: 'discord-webhook-url', pattern: /(?<![A-Za-z0-9])discord(?:app)?\.com\/api\/webhooks\/\d{5,}\/[\w-]{40,}/g },
  { id: 'heroku-api-key-v2', pattern: /(?<![A-Za-z0-9])HRKU-AA[0-9a-zA-Z_-]{58}(?![A-Za-z0-9])/g },
  { id: 'slack-webhook-url', pattern: /(?<![A-Za-z0-9])hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{30,}/g },
  { id: 'stripe-access-token', pattern: /(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}(?![A-Za-z0-9])/g },
  { id: 'anthropic-api-key', pattern: /(?<![A-Za-z0-9])sk-ant-(?:api|admin)\d\d-[\w-]{20,}/g },
  { id: 'openai-api-key', pattern: /(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}/g },
  { id: 'huggingface-access-token', pattern: /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])/g },
  { id: 'huggingface-organization-api-token', pattern: /(?<![A-Za-z0-9])api_org_[A-Za-z0-9]{30,}(?![A-Za-z0-9])/g },
  { id: 'npm-access-token', pattern: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g },
  { id: 'pypi-upload-token', pattern: /(?<![A-Za-z0-9])pypi-AgEIcHlwaS5vcmc[\w-]{50,}/g },
  { id: 'gcp-api-key', pattern: /(?<![A-Za-z0-9])AIza[\w-]{35}(?![A-Za-z0-9])/g },
  { id: 'sendgrid-api-token', pattern: /(?<![A-Za-z0-9])SG\.[\w-]{22}\.[\w-]{43}(?![A-Za-z0-9])/g },
  { id: 'twilio-api-key', pattern: /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])/g },
  { id: 'mailgun-private-api-token', pattern: /(?<![A-Za-z0-9])key-[a-f0-9]{32}(?![A-Za-z0-9])/g },
  { id: 'docker-pat', pattern: /(?<![A-Za-z0-9])dckr_pat_[\w-]{27,}/g },
  { id: 'digitalocean-token', pattern: /(?<![A-Za-z0-9])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/g },
  { id: 'shopify-token', pattern: /(?<![A-Za-z0-9])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/g },
  { id: 'databricks-api-token', pattern: /(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])/g },
  { id: 'grafana-service-account-token', pattern: /(?<![A-Za-z0-9])glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])/g },
  { id: 'doppler-api-token', pattern: /(?<![A-Za-z0-9])dp\.pt\.[a-z0-9]{43}(?![A-Za-z0-9])/gi },
  { id: 'age-secret-key', pattern: /(?<![A-Za-z0-9])AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])/g },
  { id: 'jwt', pattern: /(?<![A-Za-z0-9])ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/_-]{17,}\.(?:[a-zA-Z0-9/_-]{10,}={0,2})?/g },
  { id: 'azure-storage-account-key', pattern: /(?<![A-Za-z0-9])(AccountKey|SharedAccessKey|SharedAccessSignature|sig)=[A-Za-z0-9+/%]{16,}={0,2}/g },
]);

/** The rules with their start, not after a letter or digit, also allowed right after a percent escape (`%22`, `%2522`). */
function afterPercentEscapes(rules: ReadonlyArray<{ readonly id: string; readonly pattern: RegExp }>): typeof rules {
  const start = '(?<![A-Za-z0-9])';
  return rules.map(({ id, pattern }) => ({
    id,
    pattern: new RegExp(pattern.source.replace(start, `(?:${start}|(?<=%(?:25){0,7}[0-9A-Fa-f]{2}))`), pattern.flags),
  }));
}
