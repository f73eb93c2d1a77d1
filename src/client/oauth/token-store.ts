// Where the OAuth client keeps what it earned: tokens and the registered client, per MCP server. In memory, or in
// one JSON file under the user's config directory, readable by its owner only (0600).
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensurePrivateDir } from './private-dir.js';

export interface StoredTokens {
  accessToken: string;
  refreshToken?: string;
  /** Epoch milliseconds. */
  expiresAt?: number;
  scope?: string;
  /**
   * The authorization server that issued them (its metadata's `issuer`): the refresh token goes there and nowhere
   * else. Tokens kept before this was recorded have none, and are not used with an issuer other than their client's.
   */
  issuer?: string;
  /** The resource (RFC 8707) they were issued for: the access token is sent to that server only. */
  resource?: string;
}

export interface StoredClient {
  clientId: string;
  clientSecret?: string;
  tokenEndpointAuthMethod?: string;
  /** The authorization server the client was registered with. */
  issuer: string;
}

export interface ServerCredentials {
  tokens?: StoredTokens;
  client?: StoredClient;
}

export interface TokenStore {
  get(server: string): ServerCredentials | undefined;
  set(server: string, credentials: ServerCredentials): void;
}

export function memoryTokenStore(): TokenStore {
  const map = new Map<string, ServerCredentials>();
  return { get: (s) => map.get(s), set: (s, c) => void map.set(s, c) };
}

/** `$XDG_CONFIG_HOME/mrtr/tokens.json`, else `~/.config/mrtr/tokens.json` (`%APPDATA%\mrtr` on Windows). */
export function defaultTokenFile(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME ||
    (process.platform === 'win32' && env.APPDATA ? env.APPDATA : join(homedir(), '.config'));
  return join(base, 'mrtr', 'tokens.json');
}

/**
 * Tokens in one file, keyed by the MCP server's URL, written atomically with mode 0600 (its directory 0700, narrowed
 * if it already existed wider): other users on the machine cannot read them. A directory that cannot be made throws
 * a `TokenDirectoryError` naming it.
 */
export function fileTokenStore(path = defaultTokenFile()): TokenStore {
  const read = (): Record<string, ServerCredentials> => {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, ServerCredentials>) : {};
    } catch {
      return {};
    }
  };
  return {
    get: (server) => {
      const all = read();
      return Object.hasOwn(all, server) ? all[server] : undefined;
    },
    set: (server, credentials) => {
      const all = read();
      all[server] = credentials;
      ensurePrivateDir(dirname(path));
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, path);
    },
  };
}
