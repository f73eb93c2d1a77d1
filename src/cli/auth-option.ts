// `--tokens`, `--issuer`/`--audience` on `mrtr serve`: make the server an OAuth resource server, and say at
// start-up who can call it. Development tokens stay on loopback unless forced: anyone who reads the file is everyone
// in it.
import { BearerAuth, DevTokens, JwtVerifier, type TokenVerifier } from '../auth/index.js';
import type { SignInSetup } from '../server/index.js';

export interface AuthFlags {
  tokens?: string;
  'insecure-dev-tokens'?: boolean;
  issuer?: string;
  audience?: string;
  'jwks-uri'?: string;
  resource?: string;
  scopes?: string;
  'client-id'?: string;
  'roles-claim'?: string;
}

export const AUTH_FLAG_OPTIONS = {
  tokens: { type: 'string' },
  'insecure-dev-tokens': { type: 'boolean', default: false },
  issuer: { type: 'string' },
  audience: { type: 'string' },
  'jwks-uri': { type: 'string' },
  resource: { type: 'string' },
  scopes: { type: 'string' },
  'client-id': { type: 'string' },
  'roles-claim': { type: 'string' },
} as const;

/** 127.0.0.0/8, ::1 and localhost: addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * The BearerAuth the flags describe (undefined without any), or a message naming the problem. `endpoint` is the URL
 * the server will answer on, the resource by default.
 */
export function authFromFlags(
  flags: AuthFlags,
  host: string,
  endpoint: string,
  say: (line: string) => void,
  /** Wraps the verifier before BearerAuth uses it (the gateway keeps each request's token for token exchange). */
  wrapVerifier: (verifier: TokenVerifier) => TokenVerifier = (v) => v,
): { auth: BearerAuth | undefined; signIn?: SignInSetup } | { error: string } {
  const jwtFlags = (['issuer', 'audience', 'jwks-uri'] as const).filter((f) => flags[f] !== undefined);
  if (flags.tokens === undefined && jwtFlags.length === 0) {
    for (const f of ['resource', 'scopes', 'insecure-dev-tokens', 'client-id', 'roles-claim'] as const) {
      if (flags[f]) return { error: `--${f} needs --tokens FILE or --issuer URL` };
    }
    return { auth: undefined };
  }
  if (flags.tokens !== undefined && jwtFlags.length > 0)
    return { error: `give --tokens or --issuer, not both (--tokens with --${jwtFlags.join(', --')})` };
  if (flags.resource === undefined && flags.audience !== undefined && !/^https?:\/\//i.test(flags.audience))
    return {
      error: `--audience ${flags.audience} is not this server's URL: give --resource URL (the server's public URL) too`,
    };
  const resource = flags.resource ?? flags.audience ?? endpoint;
  const scopes = flags.scopes?.split(/[\s,]+/).filter((s) => s !== '');
  let verifier: TokenVerifier;
  let signIn: SignInSetup | undefined;
  try {
    if (flags.tokens !== undefined) {
      if (!isLoopbackHost(host) && !flags['insecure-dev-tokens'])
        return {
          error:
            `--tokens on ${host} refused: development tokens are for this machine only (anyone who reads the file ` +
            'can be anyone in it). Listen on 127.0.0.1, use --issuer for real tokens, or add --insecure-dev-tokens',
        };
      if (flags['client-id'] !== undefined) return { error: '--client-id is for --issuer (OpenID sign-in)' };
      if (flags['roles-claim'] !== undefined)
        return { error: '--roles-claim is for --issuer: a development tokens file names the roles itself' };
      const dev = DevTokens.fromFile(flags.tokens);
      verifier = dev;
      signIn = { devTokens: dev };
      const names = dev.principals.map((p) => p.subject);
      say(
        `mrtr serve: development tokens from ${flags.tokens} (${names.length}: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}); every request needs one` +
          (isLoopbackHost(host) ? '' : ` — WARNING: served on ${host} because of --insecure-dev-tokens`),
      );
    } else {
      if (flags.issuer === undefined) return { error: '--audience and --jwks-uri need --issuer URL' };
      const rolesClaim = flags['roles-claim'];
      if (rolesClaim !== undefined && !/^[\w:/-]+(\.[\w:/-]+)*$/.test(rolesClaim))
        return {
          error: `--roles-claim must be a claim name or a dotted path (realm_access.roles), got '${rolesClaim}'`,
        };
      verifier = new JwtVerifier({
        issuer: flags.issuer,
        audience: flags.audience ?? resource,
        ...(rolesClaim === undefined ? {} : { rolesClaim }),
        ...(flags['jwks-uri'] === undefined ? {} : { jwksUri: flags['jwks-uri'] }),
      });
      say(
        `mrtr serve: every request needs a JWT access token from ${flags.issuer} for audience ${flags.audience ?? resource}`,
      );
      if (flags['client-id'] !== undefined) {
        // The secret from the environment, not a flag: a flag shows in every process listing.
        const clientSecret = process.env.MRTR_CLIENT_SECRET;
        signIn = {
          oidc: {
            issuer: flags.issuer,
            clientId: flags['client-id'],
            ...(clientSecret ? { clientSecret } : {}),
            ...(rolesClaim === undefined ? {} : { rolesClaim }),
          },
        };
      }
    }
    const auth = new BearerAuth({
      verifier: wrapVerifier(verifier),
      resource,
      ...(scopes && scopes.length > 0 ? { scopesSupported: scopes } : {}),
    });
    if (signIn)
      say(
        `mrtr serve: people sign in to this server's pages at ${new URL(resource).origin}/mrtr/signin` +
          (signIn.devTokens ? ' with their own development token' : ''),
      );
    return { auth, ...(signIn ? { signIn } : {}) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
