// A person's grant as a caller may use it now: read from the vault, refreshed when it is about to expire (once per
// process at a time: a rotating refresh token used twice would be refused the second time; across a fleet, the
// loser re-reads the vault and takes the winner's grant), dropped when the third party no longer takes it, so that
// the next ask sends the person to connect again.
import { ConnectionRefused } from './errors.js';
import type { AuthorizationFlow, ConnectionOwner, TokenGrant, TokenVault } from './types.js';

export interface UsableGrantDeps {
  vault: TokenVault;
  flow: (connection: string) => AuthorizationFlow;
  refreshSkewMs: number;
  now: () => number;
  /** The grant was refreshed, or dropped because the third party refused it (`why`). */
  refreshed: (owner: ConnectionOwner, connection: string) => void;
  dropped: (owner: ConnectionOwner, connection: string, why: string) => void;
  /** Revoke at the authorization server, best effort and within a limit (never throws). */
  revoke: (connection: string, grant: TokenGrant) => Promise<boolean>;
}

export class UsableGrants {
  private readonly refreshing = new Map<string, Promise<TokenGrant | undefined>>();

  constructor(private readonly d: UsableGrantDeps) {}

  /**
   * The grant for (owner, connection) to use now, or undefined (none, or dropped). An authorization server that
   * cannot be reached throws ConnectionRefused `unavailable`: the grant stays for the next try.
   */
  async current(
    owner: ConnectionOwner,
    connection: string,
    signal?: AbortSignal,
  ): Promise<TokenGrant | undefined> {
    const grant = await this.d.vault.get(owner, connection);
    if (!grant) return undefined;
    const now = this.d.now();
    if (grant.expiresAt === undefined || grant.expiresAt - now > this.d.refreshSkewMs) return grant;
    if (!grant.refreshToken) {
      if (grant.expiresAt > now) return grant; // still good for a moment, and nothing to refresh it with
      return this.drop(owner, connection, grant, 'the access token expired and there is no refresh token');
    }
    const key = JSON.stringify([owner.issuer, owner.subject, connection]);
    let running = this.refreshing.get(key);
    if (!running) {
      running = this.refresh(owner, connection, grant, signal).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, running);
    }
    return running;
  }

  private async refresh(
    owner: ConnectionOwner,
    connection: string,
    grant: TokenGrant,
    signal?: AbortSignal,
  ): Promise<TokenGrant | undefined> {
    let fresh: TokenGrant;
    try {
      fresh = await this.d.flow(connection).refresh(grant, signal);
    } catch (error) {
      // Another instance may have refreshed first, spending the refresh token we tried: its grant is the one to use.
      const now = await this.d.vault.get(owner, connection);
      if (now && now.refreshToken !== grant.refreshToken) return now;
      if (error instanceof ConnectionRefused && error.reason === 'invalid_grant') {
        return this.drop(owner, connection, grant, 'refresh refused (invalid_grant)');
      }
      // Any other failure (an outage, a server error) is not the person's: the token serves while it lasts.
      if (now && now.expiresAt !== undefined && now.expiresAt > this.d.now()) return now;
      throw error;
    }
    // An authorization server that does not rotate refresh tokens answers none: the one we had still works.
    const kept: TokenGrant =
      fresh.refreshToken || !grant.refreshToken ? fresh : { ...fresh, refreshToken: grant.refreshToken };
    if (await this.d.vault.put(owner, connection, kept, grant)) {
      this.d.refreshed(owner, connection);
      return kept;
    }
    // Another instance refreshed first: its grant stays and is used. Or the person disconnected while the refresh
    // ran: the grant is not brought back, and a rotated refresh token nobody keeps is revoked, so none stays live.
    const current = await this.d.vault.get(owner, connection);
    if (current === undefined && kept.refreshToken !== grant.refreshToken)
      void this.d.revoke(connection, kept);
    return current;
  }

  /** Forget this grant. One put since (another instance refreshed, the person connected again) stays, and serves. */
  private async drop(
    owner: ConnectionOwner,
    connection: string,
    grant: TokenGrant,
    why: string,
  ): Promise<TokenGrant | undefined> {
    if (!(await this.d.vault.remove(owner, connection, grant))) return this.d.vault.get(owner, connection);
    this.d.dropped(owner, connection, why);
    return undefined;
  }
}
