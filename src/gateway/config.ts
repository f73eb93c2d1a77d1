// The gateway's config file: the upstreams it stands in front of and the rules of its policy. YAML (so JSON too),
// read strictly: an unknown key, a value of the wrong type, a rule that cannot work is a GatewayConfigError that
// starts with FILE:LINE: and names the key — found when the gateway starts or reloads, never on a call.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { ConfigSite, choose, GatewayConfigError } from './config-errors.js';
import type { EgressConfig } from './egress/index.js';
import { compilePolicy, type Policy, type PolicyRule } from './policy/index.js';
import { readRules } from './policy/read-rules.js';

export { GatewayConfigError } from './config-errors.js';

/** What the gateway presents to an upstream: the egress room's config, as the parser checked it. */
export type UpstreamCredentials = EgressConfig;

export interface GatewayUpstreamConfig {
  /** `^[a-z0-9][a-z0-9-]{0,31}$`, unique: the prefix of the upstream's tools and the first part of rule globs. */
  readonly name: string;
  /** Streamable HTTP endpoint (http or https). Exactly one of url and command. */
  readonly url?: string;
  /** A stdio server: the program and its arguments. */
  readonly command?: readonly string[];
  /** Stdio only: the child's working directory (absolute), also the base of relative path arguments. */
  readonly cwd?: string;
  /** Stdio only: extra environment variables for the child. */
  readonly env?: Readonly<Record<string, string>>;
  /** The argument names holding paths, in place of the default list (see normalizePathArguments). */
  readonly pathArguments?: readonly string[];
  /** The upstream opens names whatever their case (a macOS or Windows share): paths are judged and sent case-folded. */
  readonly caseInsensitive?: boolean;
  readonly credentials: UpstreamCredentials;
}

export interface GatewayConfig {
  /** The config file, absolute. */
  readonly file: string;
  readonly upstreams: readonly GatewayUpstreamConfig[];
  readonly policy: Policy;
  /** The rules as the file states them (the console shows them; the policy is what decides). */
  readonly rules: readonly PolicyRule[];
}

const UPSTREAM_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const UPSTREAM_KEYS = [
  'name',
  'url',
  'command',
  'cwd',
  'env',
  'pathArguments',
  'caseInsensitive',
  'credentials',
] as const;
const CREDENTIAL_KEYS = {
  none: ['type'],
  static: ['type', 'env', 'file'],
  'token-exchange': [
    'type',
    'issuer',
    'clientId',
    'clientSecretEnv',
    'clientSecretFile',
    'audience',
    'resource',
    'scope',
  ],
  oauth: ['type', 'issuer', 'clientId', 'clientSecret', 'scopes'],
} as const;
/** Plain http only on this machine: anyone on the path could read the codes and tokens of people's accounts. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Read the config file at `path` (relative paths in it are resolved against its directory). */
export function loadGatewayConfig(path: string): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new GatewayConfigError(`${path}:1: cannot read the config file (${reason})`, { cause: error });
  }
  return parseGatewayConfig(text, path);
}

/** The config in `text`, as if read from `file` (which names it in errors and anchors its relative paths). */
export function parseGatewayConfig(text: string, file: string): GatewayConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) {
    const line = lines.linePos(problem.pos[0]).line;
    throw new GatewayConfigError(`${file}:${line}: not valid YAML: ${problem.message.split('\n')[0]}`);
  }
  const root = new ConfigSite({ file, doc, lines }, doc.contents, '');
  if (root.missing)
    throw new GatewayConfigError(`${file}:1: the config is empty; it needs upstreams and rules`);
  const top = root.map(['upstreams', 'rules']);
  const upstreamsSite = top.get('upstreams');
  if (!upstreamsSite || upstreamsSite.missing)
    throw new GatewayConfigError(
      `${file}:1: upstreams: missing; list the MCP servers the gateway stands in front of`,
    );
  const rulesSite = top.get('rules');
  if (!rulesSite || rulesSite.missing)
    throw new GatewayConfigError(
      `${file}:1: rules: missing; without rules the gateway refuses every call (write rules: [] to mean that)`,
    );

  const baseDir = dirname(resolve(file));
  const upstreamSites = upstreamsSite.list();
  if (upstreamSites.length === 0) upstreamsSite.fail('must list at least one upstream');
  const upstreams: GatewayUpstreamConfig[] = [];
  for (const site of upstreamSites) {
    const upstream = readUpstream(site, baseDir);
    const taken = upstreams.findIndex((u) => u.name === upstream.name);
    if (taken !== -1)
      site.map(UPSTREAM_KEYS).get('name')?.fail(`"${upstream.name}" is already upstreams[${taken}]`);
    upstreams.push(upstream);
  }

  const { rules, lineOf } = readRules(
    rulesSite,
    upstreams.map((u) => u.name),
  );
  return { file: resolve(file), upstreams, policy: compilePolicy(rules, { file, lineOf, upstreams }), rules };
}

function readUpstream(site: ConfigSite, baseDir: string): GatewayUpstreamConfig {
  const fields = site.map(UPSTREAM_KEYS);
  const get = (key: (typeof UPSTREAM_KEYS)[number]) => {
    const value = fields.get(key);
    return value && !value.missing ? value : undefined;
  };
  const nameSite = get('name');
  if (!nameSite) return site.fail('missing name: the upstream needs a name (lowercase letters, digits, -)');
  const name = nameSite.text();
  if (!UPSTREAM_NAME.test(name))
    nameSite.fail(
      `"${name}" is not an upstream name: 1 to 32 lowercase letters, digits and -, not starting with -`,
    );

  const urlSite = get('url');
  const commandSite = get('command');
  if (urlSite && commandSite) site.fail('give url (Streamable HTTP) or command (stdio), not both');
  if (!urlSite && !commandSite) site.fail('missing url (Streamable HTTP) or command (stdio)');

  const stdioOnly = (key: 'cwd' | 'env') => {
    const value = get(key);
    if (value && urlSite) value.fail(`only a stdio upstream (command) takes ${key}`);
    return value;
  };
  const cwdSite = stdioOnly('cwd');
  const envSite = stdioOnly('env');
  const pathsSite = get('pathArguments');
  const caseInsensitive = get('caseInsensitive')?.boolean();
  const credentialsSite = get('credentials');
  const credentials = credentialsSite ? readCredentials(credentialsSite, baseDir) : { type: 'none' as const };
  if (credentials.type !== 'none' && commandSite)
    credentialsSite?.fail(
      'only an upstream with a url takes credentials; give a stdio command its secrets in env',
    );

  return {
    name,
    ...(urlSite ? { url: httpUrl(urlSite) } : {}),
    ...(commandSite ? { command: commandSite.texts() } : {}),
    ...(cwdSite ? { cwd: resolveFrom(baseDir, cwdSite.text()) } : {}),
    ...(envSite ? { env: readEnv(envSite) } : {}),
    ...(pathsSite ? { pathArguments: pathsSite.list().map((p) => p.text()) } : {}),
    ...(caseInsensitive ? { caseInsensitive } : {}),
    credentials,
  };
}

const resolveFrom = (baseDir: string, path: string): string =>
  isAbsolute(path) ? path : resolve(baseDir, path);

function httpUrl(site: ConfigSite): string {
  const text = site.text();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return site.fail(`"${text}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    site.fail(`"${text}" must be an http or https URL`);
  return text;
}

function readEnv(site: ConfigSite): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of site.entries()) {
    if (!ENV_NAME.test(name)) value.fail(`"${name}" is not an environment variable name`);
    const v = value.node && 'value' in value.node ? value.node.value : undefined;
    if (typeof v !== 'string') value.fail('must be text (quote numbers and true/false: "8080")');
    Object.defineProperty(env, name, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return env;
}

function readCredentials(site: ConfigSite, baseDir: string): UpstreamCredentials {
  // First the type (any key of any type may be there), then the keys that type takes.
  const typeSite = site.map([...new Set(Object.values(CREDENTIAL_KEYS).flat())]).get('type');
  if (!typeSite || typeSite.missing)
    return site.fail(`missing type (${choose(Object.keys(CREDENTIAL_KEYS))})`);
  const type = typeSite.text();
  if (!(type in CREDENTIAL_KEYS))
    typeSite.fail(`unknown credentials type "${type}" (${choose(Object.keys(CREDENTIAL_KEYS))})`);
  const fields = site.map(CREDENTIAL_KEYS[type as keyof typeof CREDENTIAL_KEYS]);
  const text = (key: string) => {
    const value = fields.get(key);
    return value && !value.missing ? value.text() : undefined;
  };
  switch (type) {
    case 'static': {
      const env = text('env');
      const file = text('file');
      if ((env === undefined) === (file === undefined))
        site.fail('static credentials need exactly one of env (a variable holding the token) or file');
      return env !== undefined ? { type, env } : { type, file: resolveFrom(baseDir, file as string) };
    }
    case 'token-exchange': {
      const issuerSite = fields.get('issuer');
      if (!issuerSite || issuerSite.missing)
        return site.fail("missing issuer: the URL of the callers' token issuer");
      const clientId = text('clientId');
      if (clientId === undefined)
        return site.fail("missing clientId: the gateway's own client at that issuer");
      const secretEnv = text('clientSecretEnv');
      const secretFile = text('clientSecretFile');
      if (secretEnv !== undefined && secretFile !== undefined)
        site.fail('give at most one of clientSecretEnv and clientSecretFile');
      const optional = (key: 'audience' | 'resource' | 'scope') => {
        const value = text(key);
        return value === undefined ? {} : { [key]: value };
      };
      return {
        type,
        issuer: httpUrl(issuerSite),
        clientId,
        ...(secretEnv !== undefined ? { clientSecretEnv: secretEnv } : {}),
        ...(secretFile !== undefined ? { clientSecretFile: resolveFrom(baseDir, secretFile) } : {}),
        ...optional('audience'),
        ...optional('resource'),
        ...optional('scope'),
      };
    }
    case 'oauth':
      return readOauth(site, fields, baseDir);
    default:
      return { type: 'none' };
  }
}

/** Each person connects their own account at the upstream's authorization server (the gateway is its client). */
function readOauth(site: ConfigSite, fields: Map<string, ConfigSite>, baseDir: string): UpstreamCredentials {
  const present = (key: string) => {
    const value = fields.get(key);
    return value && !value.missing ? value : undefined;
  };
  const clientIdSite = present('clientId');
  if (!clientIdSite)
    return site.fail("missing clientId: the gateway's own client at the upstream's authorization server");
  const issuerSite = present('issuer');
  const secretSite = present('clientSecret');
  const scopesSite = present('scopes');
  return {
    type: 'oauth',
    ...(issuerSite ? { issuer: oauthIssuer(issuerSite) } : {}),
    clientId: clientIdSite.text(),
    ...(secretSite ? { clientSecret: readSecretSource(secretSite, baseDir) } : {}),
    scopes: scopesSite ? scopesSite.texts() : [],
  };
}

/** The authorization server's issuer: https, or http on this machine only. */
function oauthIssuer(site: ConfigSite): string {
  const text = httpUrl(site);
  const url = new URL(text);
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname))
    site.fail(`"${text}" must be https (plain http only on loopback)`);
  return text;
}

/** `{ env: NAME }` or `{ file: PATH }`: where the secret is (read when the gateway starts). */
function readSecretSource(site: ConfigSite, baseDir: string): { env: string } | { file: string } {
  const fields = site.map(['env', 'file']);
  const env = fields.get('env');
  const file = fields.get('file');
  if ((env === undefined || env.missing) === (file === undefined || file.missing))
    site.fail('give exactly one of env (a variable holding the secret) or file');
  if (env && !env.missing) {
    const name = env.text();
    if (!ENV_NAME.test(name)) env.fail(`"${name}" is not an environment variable name`);
    return { env: name };
  }
  return { file: resolveFrom(baseDir, (file as ConfigSite).text()) };
}
