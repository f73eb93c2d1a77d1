// Development tokens: a JSON file mapping opaque tokens to principals, for demos and tests. Never for production —
// anyone who reads the file is everyone in it — so mrtr serve refuses them off loopback unless forced.
import * as crypto from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { MrtrError } from '../protocol/index.js';
import { invalidToken } from './errors.js';
import { type AuthPrincipal, DEV_TOKEN_ISSUER } from './principal.js';
import { SCOPE_TOKEN } from './scopes.js';
import type { TokenVerifier } from './verifier.js';

/** One entry of the tokens file: `{ "<token>": { "sub": "alice", "name": "Alice", "roles": [...], "scopes": [...] } }`. */
export interface DevTokenEntry {
  sub: string;
  name?: string;
  roles?: string[];
  scopes?: string[];
  /** The OAuth client the token stands for (default: none). */
  client_id?: string;
}

export class DevTokensError extends MrtrError {
  override readonly name = 'DevTokensError';
  declare readonly code: 'ERR_AUTH_DEV_TOKENS';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_AUTH_DEV_TOKENS', message, options);
  }
}

/** A development tokens file is a handful of demo people, not a user database. */
const MAX_TOKENS_FILE_BYTES = 1024 * 1024;

const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const ENTRY_KEYS = new Set(['sub', 'name', 'roles', 'scopes', 'client_id']);

function stringArray(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === ''))
    throw new DevTokensError(`${where} must be an array of non-empty strings`);
  return [...value];
}

/** Check a parsed tokens file and build its principals; every problem names the entry it is in. */
export function parseDevTokens(document: unknown, source = 'tokens file'): Map<string, AuthPrincipal> {
  if (document === null || typeof document !== 'object' || Array.isArray(document))
    throw new DevTokensError(`${source}: expected a JSON object { "<token>": { "sub": "…" } }`);
  const principals = new Map<string, AuthPrincipal>();
  for (const [token, raw] of Object.entries(document)) {
    const where = `${source}: token ${JSON.stringify(token.length > 12 ? `${token.slice(0, 6)}…` : token)}`;
    if (!TOKEN.test(token))
      throw new DevTokensError(`${where} is not a valid bearer token (letters, digits and -._~+/ only)`);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new DevTokensError(`${where} must map to an object with at least "sub"`);
    const entry = raw as Record<string, unknown>;
    const unknown = Object.keys(entry).filter((k) => !ENTRY_KEYS.has(k));
    if (unknown.length > 0)
      throw new DevTokensError(
        `${where} has unknown keys ${unknown.join(', ')} (known: ${[...ENTRY_KEYS].join(', ')})`,
      );
    if (typeof entry.sub !== 'string' || entry.sub === '')
      throw new DevTokensError(`${where} needs "sub", a non-empty string`);
    if (entry.name !== undefined && typeof entry.name !== 'string')
      throw new DevTokensError(`${where}: "name" must be a string`);
    if (entry.client_id !== undefined && (typeof entry.client_id !== 'string' || entry.client_id === ''))
      throw new DevTokensError(`${where}: "client_id" must be a non-empty string`);
    const scopes = stringArray(entry.scopes, `${where}: "scopes"`);
    const bad = scopes.find((s) => !SCOPE_TOKEN.test(s));
    if (bad !== undefined)
      throw new DevTokensError(`${where}: scope ${JSON.stringify(bad)} is not a valid scope token`);
    const principal: { -readonly [K in keyof AuthPrincipal]: AuthPrincipal[K] } = {
      subject: entry.sub,
      issuer: DEV_TOKEN_ISSUER,
      roles: stringArray(entry.roles, `${where}: "roles"`),
      scopes,
    };
    if (entry.name !== undefined) principal.name = entry.name;
    if (entry.client_id !== undefined) principal.clientId = entry.client_id as string;
    principals.set(token, Object.freeze(principal));
  }
  if (principals.size === 0) throw new DevTokensError(`${source}: no tokens`);
  return principals;
}

// Tokens are looked up by their SHA-256, so the lookup's timing says nothing about how much of a guess was right.
// crypto.hash (Node >= 20.12) needs no Hash object: a native handle per request measured ~10 µs under load.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64url') => string })
  .hash;
const digestOf = (token: string): string =>
  oneShotHash
    ? oneShotHash('sha256', token, 'base64url')
    : crypto.createHash('sha256').update(token).digest('base64url');

export class DevTokens implements TokenVerifier {
  readonly authorizationServers: readonly string[] = [];
  private readonly byDigest = new Map<string, AuthPrincipal>();

  constructor(tokens: Map<string, AuthPrincipal>) {
    for (const [token, principal] of tokens) this.byDigest.set(digestOf(token), principal);
  }

  /** Read and check a tokens file; errors name the file and the entry. */
  static fromFile(path: string): DevTokens {
    let text: string;
    try {
      // A regular file of sane size: /dev/zero or a FIFO would hang the start-up.
      const stat = statSync(path);
      if (!stat.isFile()) throw new DevTokensError(`tokens file ${path} is not a regular file`);
      if (stat.size > MAX_TOKENS_FILE_BYTES)
        throw new DevTokensError(
          `tokens file ${path} is ${stat.size} bytes; at most ${MAX_TOKENS_FILE_BYTES}`,
        );
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if (error instanceof DevTokensError) throw error;
      throw new DevTokensError(`cannot read tokens file ${path}: ${(error as Error).message}`);
    }
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new DevTokensError(`tokens file ${path} is not valid JSON: ${(error as Error).message}`);
    }
    return new DevTokens(parseDevTokens(document, `tokens file ${path}`));
  }

  /** The principals the file names (for start-up messages; the sign-in page asks for a token, never a name). */
  get principals(): AuthPrincipal[] {
    return [...this.byDigest.values()];
  }

  verify(token: string): AuthPrincipal {
    const principal = this.byDigest.get(digestOf(token));
    if (principal === undefined) throw invalidToken('unknown_token', 'the access token is not valid');
    return principal;
  }
}
