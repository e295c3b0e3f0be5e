import { isSecretValue } from './secret-names.ts';

/*
 * Credentials typed on command lines in the forms whose flag does not name a
 * secret (`--password …` and `--api-key …` do, see redact.ts). Each pattern
 * starts at a word it needs and reads at most to the end of the command
 * (a line break, `|`, `;` or `&`) or to where the same word starts another
 * match: linear in the text.
 */

/** A flag's value: quoted, or a run without white space or quotes. */
const VALUE = `("[^"\\n]*"|'[^'\\n]*'|[^\\s"']+)`;
/**
 * The rest of one command after a program's name, lazily, up to the next
 * place `start` matches at most: the match that starts there reads on from
 * it, and no part of a text is read again for each name before it
 * (`mysql mysql mysql …`).
 */
function sameCommandAfter(start: string): string {
  return `(?:(?!${start})[^\\n|;&])*?`;
}

const MYSQL_START = '\\b(?:mysql|mariadb)';
/**
 * `mysql -pSECRET` (and the other MySQL and MariaDB clients): the password
 * is joined to `-p`; `-p NAME` asks for the password and NAME is a database.
 */
const MYSQL = new RegExp(`(${MYSQL_START}${sameCommandAfter(MYSQL_START)}\\s-p)("[^"\\n]*"|'[^'\\n]*'|[^\\s"'-][^\\s"']*)`, 'g');
const SSHPASS_START = '\\bsshpass\\b';
const REGISTRY_START = '\\b(?:docker|podman|nerdctl|buildah|skopeo|helm|oras|crane)\\b';
/**
 * `sshpass -p SECRET`, and `-p SECRET` of a registry login (`docker login -u me -p …`). The words up to `login` stop
 * at the first `login`: a later one would only have the same rest of the command read again.
 */
const PASSWORD_P = new RegExp(
  `((?:${SSHPASS_START}${sameCommandAfter(SSHPASS_START)}|${REGISTRY_START}(?:(?!${REGISTRY_START}|\\blogin\\b)[^\\n|;&])*\\blogin\\b${sameCommandAfter(REGISTRY_START)})\\s-p\\s*)${VALUE}`,
  'g',
);
const REDIS_CLI_START = '\\b(?:redis|valkey|keydb)-cli\\b';
/** `redis-cli -a SECRET` (and its forks): `-a` is the password there, and in other commands anything but. */
const REDIS_CLI = new RegExp(`(${REDIS_CLI_START}${sameCommandAfter(REDIS_CLI_START)}\\s-a\\s+)${VALUE}`, 'g');
/**
 * `curl -u user:SECRET`, `--user user:SECRET`, `--proxy-user`, and short
 * flags run together (`-sfu`). A value after the colon that starts with `/`
 * is a remote path (`rsync -avu host:/dir`), and one of digits only a group
 * id (`docker run -u 1000:1000`): neither is a password.
 */
const USER_COLON_PASSWORD = /(\s(?:-[A-Za-z]*[uU]|--(?:proxy-)?user)(?:\s+|=)["']?[^\s:"'@/]*:)([^\s"'/][^\s"']*)/g;
/**
 * `aws configure set aws_secret_access_key SECRET`, `git config user.password
 * SECRET`, `npm config set //registry/:_authToken SECRET`: a setting and its
 * value, judged by the setting's name as an assignment is.
 */
const CONFIG_SET = new RegExp(`(\\bconfig(?:ure)?(?:\\s+set)?(?:\\s+--?[\\w-]+)*\\s+([\\w.:/@-]{1,128})\\s+)${VALUE}`, 'g');

/** What each form needs somewhere in a text. */
const MAY_HOLD =
  /mysql|mariadb|(?:redis|valkey|keydb)-cli|(?:sshpass|login)\b(?:(?!sshpass|login)[^\n])*?\s-p|\s-[A-Za-z]*u[\s=]|--(?:proxy-)?user|\bconfig(?:ure)?\s[^\n]{0,200}?(?:pass|pw|secret|credential|key|token|auth|jwt|sig|cookie|dsn|sas)/i;

/** The quotes around a value stay, so the command still reads as it was typed. */
function redactedValue(value: string, replacement: string): string {
  const quote = value.charAt(0);
  return (quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote) ? `${quote}${replacement}${quote}` : replacement;
}

/** Whether the text may hold one of these forms (the check `redact` makes before its rules). */
export function mayHoldCommandLineCredential(text: string): boolean {
  return MAY_HOLD.test(text);
}

/** `text` with the credentials of these command-line forms replaced by `replacement`. */
export function redactCommandLineCredentials(text: string, replacement: string): string {
  if (!mayHoldCommandLineCredential(text)) return text;
  return text
    .replace(MYSQL, (_match, before: string, value: string) => `${before}${redactedValue(value, replacement)}`)
    .replace(PASSWORD_P, (_match, before: string, value: string) => `${before}${redactedValue(value, replacement)}`)
    .replace(REDIS_CLI, (_match, before: string, value: string) => `${before}${redactedValue(value, replacement)}`)
    .replace(USER_COLON_PASSWORD, (match, before: string, value: string) => (/^\d+$/.test(value) ? match : `${before}${replacement}`))
    .replace(CONFIG_SET, (match, before: string, name: string, value: string) => {
      const bare = value.length >= 2 && (value.startsWith('"') || value.startsWith("'")) ? value.slice(1, -1) : value;
      return isSecretValue(name, bare) ? `${before}${redactedValue(value, replacement)}` : match;
    });
}
