// Errors the state room throws at its callers, each an MrtrError with a stable code.
import { MrtrError } from '../protocol/index.js';

/** A codec option, a seal option or a binding of the wrong type. */
export class StateUsageError extends MrtrError {
  override readonly name: string = 'StateUsageError';
  declare readonly code: 'ERR_STATE_USAGE';
  constructor(message: string) {
    super('ERR_STATE_USAGE', message);
  }
}

/** A codec or seal option out of its range: a StateUsageError (one class per code), named for the range. */
export class StateRangeError extends StateUsageError {
  override readonly name: string = 'StateRangeError';
}

/** Thrown by `seal` when the payload or the resulting token is over its cap. */
export class StateTooLargeError extends MrtrError {
  override readonly name = 'StateTooLargeError';
  declare readonly code: 'ERR_STATE_TOO_LARGE';
  constructor(message: string) {
    super('ERR_STATE_TOO_LARGE', message);
  }
}
