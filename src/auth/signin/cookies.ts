// Cookies for the server's own pages: read the Cookie header, write Set-Cookie with the flags a session needs.

/** The value of cookie `name` in a Cookie header (the first, if the browser sent several). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  /** Secure flag: on for https (then the `__Host-` prefix applies), off only for plain-http loopback development. */
  secure: boolean;
  /** Lax lets the issuer's redirect back carry the cookie; Strict for cookies no cross-site navigation needs. */
  sameSite: 'Lax' | 'Strict';
}

/**
 * A Set-Cookie value: HttpOnly always (no script reads a session), Path=/ (with `__Host-` the browser demands it).
 * Values are base64url or short tokens we make ourselves, so they need no quoting.
 */
export function setCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    `SameSite=${options.sameSite}`,
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The cookie name: `__Host-` on https, so no subdomain or plain-http page can set or shadow it. */
export const cookieName = (base: string, secure: boolean): string => (secure ? `__Host-${base}` : base);
