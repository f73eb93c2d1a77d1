// The notifications file (`mrtr serve --notify FILE`), YAML or JSON: which webhooks hear of which approval requests.
//
//   webhooks:
//     - name: approvers
//       url: https://hooks.example.com/mrtr
//       roles: [approver]              # the requests' roles it is for; ['*'] for all
//       format: signed-json            # or slack
//       secretEnv: MRTR_WEBHOOK_SECRET # or secretFile: ./data/webhook-secret (signed-json only)
//
// A secret is never written in the file itself: a config file is read by more people than a secret should be.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { MrtrError } from '../protocol/index.js';

export interface WebhookTarget {
  readonly name: string;
  readonly url: URL;
  readonly roles: readonly string[];
  readonly format: 'signed-json' | 'slack';
  readonly secret?: string;
}

export class NotifyConfigError extends MrtrError {
  override readonly name = 'NotifyConfigError';
  declare readonly code: 'ERR_NOTIFY_CONFIG';
  constructor(message: string) {
    super('ERR_NOTIFY_CONFIG', message);
  }
}

const isLoopback = (host: string) =>
  host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

const KEYS = new Set(['name', 'url', 'roles', 'format', 'secretEnv', 'secretFile']);

export function readNotifyConfig(path: string, env: NodeJS.ProcessEnv = process.env): WebhookTarget[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new NotifyConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new NotifyConfigError(`${path}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const fail = (where: string, what: string) => new NotifyConfigError(`${path}: ${where}: ${what}`);
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { webhooks?: unknown }).webhooks))
    throw fail('webhooks', 'the file needs a list named webhooks');
  const names = new Set<string>();
  return (doc as { webhooks: unknown[] }).webhooks.map((raw, i) => {
    const at = `webhooks[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw fail(at, 'must be a mapping');
    const w = raw as Record<string, unknown>;
    for (const key of Object.keys(w))
      if (!KEYS.has(key))
        throw fail(`${at}.${key}`, 'is not a setting (name, url, roles, format, secretEnv, secretFile)');
    if (typeof w.name !== 'string' || !/^[\w.-]{1,64}$/.test(w.name))
      throw fail(`${at}.name`, 'must be 1-64 letters, digits, . _ or -');
    if (names.has(w.name)) throw fail(`${at}.name`, `${w.name} is used twice`);
    names.add(w.name);
    let url: URL;
    try {
      url = new URL(String(w.url));
    } catch {
      throw fail(`${at}.url`, `is not a URL: ${JSON.stringify(w.url)}`);
    }
    // An approval request names people and effects: it travels encrypted, except to this machine itself.
    if (!(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname))))
      throw fail(`${at}.url`, 'must be https:// (or http:// to 127.0.0.1, ::1 or localhost)');
    if (url.username || url.password) throw fail(`${at}.url`, 'must not carry a user or a password');
    const roles = w.roles ?? ['*'];
    if (!Array.isArray(roles) || roles.length === 0 || !roles.every((r) => typeof r === 'string' && r !== ''))
      throw fail(`${at}.roles`, 'must be a list of role names, or [*] for every role');
    const format = w.format ?? 'signed-json';
    if (format !== 'signed-json' && format !== 'slack')
      throw fail(`${at}.format`, 'must be signed-json or slack');
    let secret: string | undefined;
    if (w.secretEnv !== undefined && w.secretFile !== undefined)
      throw fail(at, 'give secretEnv or secretFile, not both');
    if (w.secretEnv !== undefined) {
      if (typeof w.secretEnv !== 'string' || !env[w.secretEnv])
        throw fail(`${at}.secretEnv`, `the variable ${String(w.secretEnv)} is not set`);
      secret = env[w.secretEnv];
    } else if (w.secretFile !== undefined) {
      try {
        secret = readFileSync(String(w.secretFile), 'utf8').trim();
      } catch (error) {
        throw fail(`${at}.secretFile`, `cannot read ${String(w.secretFile)}: ${(error as Error).message}`);
      }
    }
    if (format === 'signed-json' && (secret === undefined || secret.length < 16))
      throw fail(
        at,
        'a signed-json webhook needs a secret of at least 16 characters (secretEnv or secretFile)',
      );
    return {
      name: w.name,
      url,
      roles: roles as string[],
      format,
      ...(secret === undefined ? {} : { secret }),
    };
  });
}
