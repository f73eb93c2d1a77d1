// Who opened a page: the signed session cookie a browser sign-in leaves, and the checks a page makes with it.

import { randomBytes } from 'node:crypto';
import type { PageRequest } from '../../protocol/index.js';
import { hmacSha256 } from '../../state/internal.js';
import { readCookie } from './cookies.js';
import type { SignedValues } from './signed-value.js';

export interface PageSession {
  readonly subject: string;
  readonly issuer: string;
  readonly name?: string;
  readonly roles: readonly string[];
  /** How the person signed in. */
  readonly via: 'oidc' | 'dev';
  /** This session's id: what its CSRF token is derived from. */
  readonly sid: string;
  readonly expiresAt: number;
}

/** What a page compares the signed-in person with: the principal of a flow (subject and issuer). */
export interface ExpectedPrincipal {
  readonly subject: string;
  readonly issuer?: string;
}

/**
 * Is the person who opened the page the principal of the flow? URL-mode elicitation demands this check against
 * phishing (client/elicitation.mdx): a link forwarded to, or opened by, someone else must not act for the requester.
 * Same subject at the same issuer. A principal without an issuer matches no one: a subject alone is a name, and
 * the same name at two issuers is two people.
 */
export function isSamePrincipal(session: PageSession, expected: ExpectedPrincipal): boolean {
  return (
    expected.issuer !== undefined &&
    session.subject === expected.subject &&
    session.issuer === expected.issuer
  );
}

export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** The session a request's cookie carries, or undefined (none, forged, expired, malformed). */
export function readSession(req: PageRequest, cookie: string, values: SignedValues): PageSession | undefined {
  const raw = values.open(readCookie(req.headers.cookie, cookie));
  if (!raw) return undefined;
  const { sub, iss, name, roles, via, sid, exp } = raw;
  if (typeof sub !== 'string' || typeof iss !== 'string' || typeof sid !== 'string') return undefined;
  if (via !== 'oidc' && via !== 'dev') return undefined;
  const session: { -readonly [K in keyof PageSession]: PageSession[K] } = {
    subject: sub,
    issuer: iss,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [],
    via,
    sid,
    expiresAt: exp as number,
  };
  if (typeof name === 'string') session.name = name;
  return session;
}

/** The CSRF token of a session's forms: derived from its id, so it needs no storage and dies with the session. */
export function csrfTokenOf(session: PageSession, key: Uint8Array): string {
  return hmacSha256(key, `mrtr/csrf\n${session.sid}`).toString('base64url');
}
