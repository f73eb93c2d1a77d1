// The one base of every error mrtr throws at its callers, with a stable `code` from a closed list (as jose's
// JOSEError): branch on `code`, never on the message. JSON-RPC errors (McpError, the client's RemoteError) are the
// other family: their numeric `code` is the protocol's, the one that travels on the wire.

/** Every code an MrtrError may carry, each with what it means. A new code is a new entry here, on purpose. */
export const MRTR_ERROR_CODES = Object.freeze([
  /** An option, a flag's value or a spec (store, audit URL, endpoint URL) of the wrong type, out of range or malformed. */
  'ERR_INVALID_OPTION',
  /** An argument a function cannot use (a value no header can carry, a store key too long, an id already in use). */
  'ERR_INVALID_ARGUMENT',
  /** Something mrtr waited on did not answer within its limit (a request, a call, a store). */
  'ERR_TIMEOUT',
  /** The caller's signal, or the person at the terminal, ended the request. */
  'ERR_ABORTED',
  /** What mrtr reads back (a shared store's record, a secrets file) is not in the form mrtr writes it. */
  'ERR_CORRUPT_DATA',
  /** The directory a file goes in could not be made. */
  'ERR_MAKE_DIRECTORY',
  // state
  /** A codec option, a seal option or a binding of the wrong type or out of range. */
  'ERR_STATE_USAGE',
  /** A payload or a sealed token over its cap. */
  'ERR_STATE_TOO_LARGE',
  /** A key spec (`kid:secret,…`) that cannot be read. */
  'ERR_KEY_SPEC',
  /** A value that has no JSON form (NaN, a bigint, a function, undefined). */
  'ERR_NOT_JSON',
  // stores
  /** A shared store could not be reached or answered with an error: guarded rounds fail closed. */
  'ERR_STORE_UNAVAILABLE',
  /** A record in a shared store kept changing under a compare-and-set until the retries ran out. */
  'ERR_STORE_CONTENDED',
  // flow
  /** A flow ended early (declined, cancelled, too many invalid answers): tools answer it as an isError result. */
  'ERR_FLOW_ENDED',
  /** A flow used in a way that cannot work (an empty choice, a form zod cannot send, two questions on one key). */
  'ERR_FLOW_USAGE',
  // server
  /** A tool, prompt, resource or template that cannot be served (bad schema, name taken, registered too late). */
  'ERR_REGISTRATION',
  /** A handler broke its contract (returned something that is not a result, mixed ask and inputRequired, …). */
  'ERR_HANDLER_CONTRACT',
  /** A handler did not finish within its time limit (the abort reason its signal carries). */
  'ERR_HANDLER_TIMEOUT',
  // auth
  /** RFC 6750 `invalid_request`: no token, or a request the bearer check cannot read. */
  'ERR_AUTH_INVALID_REQUEST',
  /** RFC 6750 `invalid_token`: expired, wrong audience, bad signature, … */
  'ERR_AUTH_INVALID_TOKEN',
  /** RFC 6750 `insufficient_scope`. */
  'ERR_AUTH_INSUFFICIENT_SCOPE',
  /** The token could not be checked (the issuer did not answer). */
  'ERR_AUTH_UNAVAILABLE',
  /** A BearerAuth or JwtVerifier option that cannot work. */
  'ERR_AUTH_CONFIG',
  /** The issuer's metadata could not be fetched or is not usable. */
  'ERR_AUTH_ISSUER_METADATA',
  /** A development-tokens option or file that cannot work. */
  'ERR_AUTH_DEV_TOKENS',
  /** A BrowserSignIn option that cannot work. */
  'ERR_SIGNIN_CONFIG',
  /** A form posted to one of the server's pages that cannot be read. */
  'ERR_PAGE_FORM',
  // audit
  /** An audit URL, key or option is malformed. */
  'ERR_AUDIT_CONFIG',
  /** The audit sink could not store or read events. */
  'ERR_AUDIT_UNAVAILABLE',
  /** What was read back is not an audit trail: tampered with, or not ours. */
  'ERR_AUDIT_CORRUPT',
  /** The audit trail was closed; no event is accepted any more. */
  'ERR_AUDIT_CLOSED',
  // controls
  /** A control (consent, step-up, approval) used in a way that cannot work (an effect that is not flat facts, …). */
  'ERR_CONTROLS_USAGE',
  /** A vote or a redemption of an approval was refused (forbidden, conflict, not found). */
  'ERR_APPROVAL_REFUSED',
  // connections
  /** Connections used in a way that cannot work (an unknown connection, an anonymous caller, no sign-in). */
  'ERR_CONNECTIONS_USAGE',
  /** A third party's authorization server refused, or its answer failed a check (state, issuer, PKCE). */
  'ERR_CONNECTION_REFUSED',
  // console
  /** The operator's console configured in a way that cannot work (two panels with one id, …). */
  'ERR_CONSOLE_USAGE',
  // notify
  /** The notifications file names no webhook that can work (a URL, a secret, a setting). */
  'ERR_NOTIFY_CONFIG',
  /** A webhook delivery a receiver checked was not ours, was changed, or is too old. */
  'ERR_WEBHOOK_REFUSED',
  /** The JSON body of a request to the approvals API cannot be read. */
  'ERR_REQUEST_BODY',
  // client
  /** The server broke the protocol: garbage JSON, a wrong id, an unknown resultType, an undeclared input kind, … */
  'ERR_PROTOCOL_VIOLATION',
  /** The request never got an answer: connection refused or reset, an HTTP error without a JSON-RPC body, … */
  'ERR_TRANSPORT',
  /** A legacy (2025) server ended the session. */
  'ERR_SESSION_EXPIRED',
  /** An OAuth sign-in that cannot go on. */
  'ERR_OAUTH',
  /** A call ended without a result (declined, round cap, server error, …); the message says how. */
  'ERR_CALL_INCOMPLETE',
  /** `McpClient.round` was given a held call's requestState no call is held under for this holder. */
  'ERR_HELD_CALL_UNKNOWN',
  /** A held 2025 call waited past its time limit: it was dropped and its upstream call cancelled. */
  'ERR_HELD_CALL_EXPIRED',
  /** A held call's requestState was presented twice: each is good for one round. */
  'ERR_HELD_CALL_USED',
  // gateway
  /** A gateway config that cannot work (an upstream's credentials: a secret's variable unset, its file unreadable). */
  'ERR_GATEWAY_CONFIG',
  /** The credentials an upstream needs could not be obtained for this caller (no token to exchange, exchange refused). */
  'ERR_GATEWAY_EGRESS',
  /** The gateway's lock file of pinned tool definitions cannot be read, or is not in the form mrtr writes it. */
  'ERR_GATEWAY_PINS',
  // cli
  /** A command line that cannot be run (unknown option, missing value, bad flag). */
  'ERR_USAGE',
  /** The server under test did not do what a conformance scenario requires (`mrtr conformance-client`). */
  'ERR_CONFORMANCE',
] as const);

export type MrtrErrorCode = (typeof MRTR_ERROR_CODES)[number];

export class MrtrError extends Error {
  /** Stable and machine-readable: branch on this, never on the message. */
  readonly code: MrtrErrorCode;
  constructor(code: MrtrErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = 'MrtrError';
  }
}

// The classes of the codes every room throws (an option, an argument, a time limit, data read back, a directory):
// one class per code, so `switch (error.code)` on an AnyMrtrError narrows to it.

/** An option, a flag's value or a spec of the wrong type, out of range or malformed. */
export class InvalidOptionError extends MrtrError {
  override readonly name: string = 'InvalidOptionError';
  declare readonly code: 'ERR_INVALID_OPTION';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_INVALID_OPTION', message, options);
  }
}

/** An argument a function cannot use. */
export class InvalidArgumentError extends MrtrError {
  override readonly name: string = 'InvalidArgumentError';
  declare readonly code: 'ERR_INVALID_ARGUMENT';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_INVALID_ARGUMENT', message, options);
  }
}

/** Something mrtr waited on did not answer within its limit. */
export class TimeLimitError extends MrtrError {
  override readonly name: string = 'TimeLimitError';
  declare readonly code: 'ERR_TIMEOUT';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_TIMEOUT', message, options);
  }
}

/** What mrtr reads back is not in the form mrtr writes it. */
export class CorruptDataError extends MrtrError {
  override readonly name: string = 'CorruptDataError';
  declare readonly code: 'ERR_CORRUPT_DATA';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_CORRUPT_DATA', message, options);
  }
}

/** The directory a file goes in could not be made. */
export class MakeDirectoryError extends MrtrError {
  override readonly name: string = 'MakeDirectoryError';
  declare readonly code: 'ERR_MAKE_DIRECTORY';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_MAKE_DIRECTORY', message, options);
  }
}

/** A record in a shared store kept changing under a compare-and-set until the retries ran out. */
export class StoreContendedError extends MrtrError {
  override readonly name: string = 'StoreContendedError';
  declare readonly code: 'ERR_STORE_CONTENDED';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_STORE_CONTENDED', message, options);
  }
}
