// Errors the server room throws at its callers, each with a stable `code` to branch on (never the message).
import { MrtrError } from '../protocol/index.js';

export type ServerErrorCode =
  /** A tool, prompt, resource or template was registered that cannot be served (bad schema, name taken, …). */
  | 'ERR_REGISTRATION'
  /** A handler broke its contract (returned something that is not a result, mixed ask and inputRequired, …). */
  | 'ERR_HANDLER_CONTRACT';

export class ServerError extends MrtrError {
  override readonly name = 'ServerError';
  declare readonly code: ServerErrorCode;
  constructor(code: ServerErrorCode, message: string) {
    super(code, message);
  }
}

// An option out of its range or of the wrong type: the one class of ERR_INVALID_OPTION, in protocol/ for every room.
export { InvalidOptionError } from '../protocol/index.js';

export const registrationError = (message: string): ServerError =>
  new ServerError('ERR_REGISTRATION', message);
export const handlerContractError = (message: string): ServerError =>
  new ServerError('ERR_HANDLER_CONTRACT', message);
