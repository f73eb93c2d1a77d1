// A legacy client's session (streamable-http.mdx "Session Management"), sealed into the Mcp-Session-Id itself:
// the version negotiated, the client's capabilities and who opened it, signed with a key derived from the
// keyring. Any instance that shares the keyring can read it, so no session table has to follow the client around.
// What does change — DELETE ending it, logging/setLevel — lives in the shared store under the id's hash.
import { createHash, randomBytes } from 'node:crypto';
import type { ClientCapabilities, Implementation, JsonObject } from '../../protocol/index.js';
import { hmacSha256, KidSigner, type SigningKey } from '../../state/internal.js';
import type { Principal } from '../context.js';

export interface LegacySession {
  /** The token as the client sends it. */
  readonly id: string;
  /** sha256 of the token: the key under which its mutable state is stored (never the token itself). */
  readonly key: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | undefined;
  /** ms since the epoch. */
  readonly issuedAt: number;
}

interface Payload {
  v: string;
  c: ClientCapabilities;
  i?: Implementation;
  /** Who opened it: a digest, so the token tells nothing about the principal. */
  p: string;
  t: number;
  /** Random: two identical handshakes get two sessions. */
  n: string;
}

export type SessionRefusal = 'malformed' | 'forged' | 'expired' | 'other_principal';

/** Session ids whose MAC one instance has checked, kept so a session's later requests skip the HMAC and the parse. */
const VERIFIED_SESSIONS = 4096;

export class SessionCodec {
  // The id is `kid.body.mac`, the MAC over "kid.body"; ids longer than MAX_SIGNED_TOKEN_BYTES are refused unread.
  private readonly signer: KidSigner;
  /** Ids verified here, by the exact id, with the principal they were opened for; the oldest goes first. */
  private readonly verified = new Map<string, { session: LegacySession; who: string }>();
  constructor(
    keys: readonly SigningKey[],
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.signer = new KidSigner(keys, (kid, body) => `${kid}.${body}`);
  }

  issue(
    protocolVersion: string,
    capabilities: ClientCapabilities,
    info: Implementation | undefined,
    principal: Principal | undefined,
  ): LegacySession {
    const payload: Payload = {
      v: protocolVersion,
      c: capabilities,
      p: this.principalTag(this.signer.current.key, principal),
      t: this.now(),
      n: randomBytes(9).toString('base64url'),
    };
    if (info) payload.i = info;
    const id = this.signer.sign(Buffer.from(JSON.stringify(payload)).toString('base64url'));
    return toSession(id, payload);
  }

  /** Open a session id; a refusal names why (the client is told only "not found" or "forbidden"). */
  open(id: string, principal: Principal | undefined): LegacySession | SessionRefusal {
    // Only an id that passed the MAC is kept, by its exact text: a forged one is never found here.
    const known = this.verified.get(id);
    if (known && known.who === whoOf(principal)) {
      if (this.now() - known.session.issuedAt <= this.maxAgeMs) return known.session;
      this.verified.delete(id);
      return 'expired';
    }
    const opened = this.verify(id, principal);
    if (typeof opened === 'string') return opened;
    if (this.verified.size >= VERIFIED_SESSIONS)
      this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(id, { session: opened, who: whoOf(principal) });
    return opened;
  }

  private verify(id: string, principal: Principal | undefined): LegacySession | SessionRefusal {
    const signed = this.signer.verify(id);
    if (typeof signed === 'string') return signed;
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(signed.body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return 'malformed';
    }
    if (typeof payload.t !== 'number' || this.now() - payload.t > this.maxAgeMs) return 'expired';
    if (payload.p !== this.principalTag(signed.key.key, principal)) return 'other_principal';
    return toSession(id, payload);
  }

  private principalTag(key: Uint8Array, principal: Principal | undefined): string {
    if (!principal) return '';
    return hmacSha256(key, `principal\0${principal.issuer ?? ''}\0${principal.subject}`)
      .toString('base64url')
      .slice(0, 22);
  }
}

const whoOf = (principal: Principal | undefined) =>
  principal ? `${principal.issuer ?? ''}\0${principal.subject}` : '';

function toSession(id: string, p: Payload): LegacySession {
  return {
    id,
    key: createHash('sha256').update(id).digest('base64url'),
    protocolVersion: p.v,
    clientCapabilities: p.c,
    clientInfo: p.i,
    issuedAt: p.t,
  };
}

/** What of a client's Implementation the session keeps: name and version, cut short (icons and all stay out). */
export function keptClientInfo(info: unknown): Implementation | undefined {
  if (info === null || typeof info !== 'object') return undefined;
  const { name, version } = info as JsonObject;
  if (typeof name !== 'string') return undefined;
  return { name: name.slice(0, 128), version: typeof version === 'string' ? version.slice(0, 64) : '' };
}
