// The OAuth 2.1 resource server duties of an MCP server (authorization/index.mdx): every request carries a bearer
// token that a verifier accepts, or gets 401 with a challenge that says where to get one; operations needing scopes
// the token lacks get 403 insufficient_scope; the Protected Resource Metadata says which issuer and scopes.
import { authorizationHeaders, bearerToken } from './bearer-header.js';
import { bearerChallenge } from './challenge.js';
import { AUTH_DEFAULTS } from './defaults.js';
import { AuthConfigError, AuthRefusal } from './errors.js';
import type { AuthPrincipal } from './principal.js';
import {
  checkResourceUrl,
  metadataPaths,
  metadataUrl,
  type ProtectedResourceMetadata,
} from './resource-metadata.js';
import { missingScopes, SCOPE_TOKEN, type ScopeImplications } from './scopes.js';
import type { TokenVerifier } from './verifier.js';

export interface BearerAuthOptions {
  /** Checks tokens: `new JwtVerifier({...})` for an OAuth issuer, `DevTokens.fromFile(path)` for development. */
  verifier: TokenVerifier;
  /** This server's canonical URL (RFC 8707 / RFC 9728 `resource`), e.g. `https://mcp.example.com/mcp`. */
  resource: string;
  /** The scopes a client should ask for to use this server at all (`scopes_supported`, and the 401's `scope`). */
  scopesSupported?: readonly string[];
  /** Broad scopes that imply narrower ones, when deciding whether a token covers an operation. */
  scopeImplications?: ScopeImplications;
  /** A human-readable name for the metadata (`resource_name`). */
  resourceName?: string;
  /** A page for people (`resource_documentation`), e.g. the development sign-in page. */
  documentation?: string;
  /** Longest a verifier may take for one token before the request is answered 503 (default 10 s). */
  verifyTimeoutMs?: number;
}

/**
 * What a verifier threw that is not a refusal is our failure, not the token's: 503 with a fixed message (the cause,
 * which may name internal hosts, goes to the log only), so a client does not throw a good token away.
 */
function verifierFailure(error: unknown): AuthRefusal {
  if (error instanceof AuthRefusal) return error;
  return new AuthRefusal('unavailable', 'verifier_failed', 'the access token could not be checked', {
    cause: error,
  });
}

/** A verifier's answer, checked: a principal without a subject would be bound as nobody and everybody. */
function checkedPrincipal(principal: AuthPrincipal): AuthPrincipal {
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (
    principal === null ||
    typeof principal !== 'object' ||
    typeof principal.subject !== 'string' ||
    principal.subject === '' ||
    typeof principal.issuer !== 'string' ||
    !strings(principal.roles) ||
    !strings(principal.scopes)
  )
    throw new AuthRefusal('unavailable', 'verifier_bad_principal', 'the access token could not be checked', {
      cause: new BearerAuthConfigError(
        'the verifier returned no valid principal (subject, issuer, roles, scopes)',
      ),
    });
  return principal;
}

export class BearerAuthConfigError extends AuthConfigError {
  override readonly name: string = 'BearerAuthConfigError';
}

export class BearerAuth {
  readonly resource: string;
  readonly metadataUrl: string;
  /** The paths (on this server's origin) that answer the metadata. */
  readonly metadataPaths: readonly string[];
  private readonly metadataBody: string;
  private readonly scopesSupported: readonly string[];
  private readonly implications: ScopeImplications;

  constructor(private readonly options: BearerAuthOptions) {
    if (typeof options.verifier?.verify !== 'function')
      throw new BearerAuthConfigError('BearerAuth: verifier must have a verify(token) method');
    const problem = checkResourceUrl(options.resource);
    if (problem) throw new BearerAuthConfigError(`BearerAuth: ${problem}`);
    const badScope = (options.scopesSupported ?? []).find((s) => !SCOPE_TOKEN.test(s));
    if (badScope !== undefined)
      throw new BearerAuthConfigError(`BearerAuth: ${JSON.stringify(badScope)} is not a valid scope token`);
    this.resource = options.resource;
    this.metadataUrl = metadataUrl(options.resource);
    this.metadataPaths = metadataPaths(options.resource);
    this.scopesSupported = [...(options.scopesSupported ?? [])];
    this.implications = options.scopeImplications ?? {};
    const metadata: ProtectedResourceMetadata = {
      resource: options.resource,
      bearer_methods_supported: ['header'],
    };
    if (options.verifier.authorizationServers.length > 0)
      metadata.authorization_servers = [...options.verifier.authorizationServers];
    if (this.scopesSupported.length > 0) metadata.scopes_supported = [...this.scopesSupported];
    if (options.resourceName !== undefined) metadata.resource_name = options.resourceName;
    if (options.documentation !== undefined) metadata.resource_documentation = options.documentation;
    this.metadataBody = JSON.stringify(metadata);
  }

  /** The Protected Resource Metadata document, as JSON text. */
  get metadata(): string {
    return this.metadataBody;
  }

  /**
   * Who sent this request (node's `rawHeaders` and `url`). Throws AuthRefusal; synchronous when the verifier is
   * (development tokens, a remembered JWT), so the common path costs no promise.
   */
  authenticate(rawHeaders: readonly string[], url: string): AuthPrincipal | Promise<AuthPrincipal> {
    const token = bearerToken(authorizationHeaders(rawHeaders), url);
    let verified: AuthPrincipal | Promise<AuthPrincipal>;
    try {
      verified = this.options.verifier.verify(token);
    } catch (error) {
      throw verifierFailure(error);
    }
    if (!(verified instanceof Promise)) return checkedPrincipal(verified);
    // A verifier that never answers must not hold the request for ever: past the limit, 503.
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AuthRefusal(
              'unavailable',
              'verifier_timeout',
              'the access token could not be checked in time',
            ),
          ),
        this.options.verifyTimeoutMs ?? AUTH_DEFAULTS.verifyTimeoutMs,
      );
    });
    return Promise.race([verified, limit]).then(
      (principal) => {
        clearTimeout(timer);
        return checkedPrincipal(principal);
      },
      (error: unknown) => {
        clearTimeout(timer);
        throw verifierFailure(error);
      },
    );
  }

  /** The scopes of `required` that `principal` lacks (scope implications followed). */
  missingScopes(
    principal: { scopes?: readonly string[] } | undefined,
    required: readonly string[],
  ): string[] {
    return missingScopes(principal?.scopes ?? [], required, this.implications);
  }

  /** The WWW-Authenticate value for a refusal (or for a request that brought no token). */
  challenge(refusal: AuthRefusal | undefined): string {
    const scope =
      refusal?.scopes ??
      (refusal?.error === 'invalid_request' || !refusal ? this.scopesSupported : undefined);
    return bearerChallenge({ resourceMetadata: this.metadataUrl, scope, refusal });
  }
}

/** The refusal for an operation that needs scopes the token lacks (403, RFC 6750 §3.1). */
export function insufficientScope(required: readonly string[], missing: readonly string[]): AuthRefusal {
  return new AuthRefusal(
    'insufficient_scope',
    'insufficient_scope',
    `Forbidden: this operation needs the scope${required.length > 1 ? 's' : ''} ${required.join(' ')} (missing: ${missing.join(' ')})`,
    { scopes: required },
  );
}
