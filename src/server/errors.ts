// Errors the server room throws at its callers, each with a stable `code` to branch on (never the message).

export type ServerErrorCode =
  /** A tool, prompt, resource or template was registered that cannot be served (bad schema, name taken, …). */
  | 'ERR_REGISTRATION'
  /** An option is out of its range or of the wrong type. */
  | 'ERR_INVALID_OPTION'
  /** A handler broke its contract (returned something that is not a result, mixed ask and inputRequired, …). */
  | 'ERR_HANDLER_CONTRACT';

export class ServerError extends Error {
  override readonly name = 'ServerError';
  constructor(
    readonly code: ServerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Out-of-range options stay RangeErrors, so code that caught those before still does. */
export class InvalidOptionError extends RangeError {
  override readonly name = 'InvalidOptionError';
  readonly code = 'ERR_INVALID_OPTION';
}

export const registrationError = (message: string): ServerError =>
  new ServerError('ERR_REGISTRATION', message);
export const handlerContractError = (message: string): ServerError =>
  new ServerError('ERR_HANDLER_CONTRACT', message);
