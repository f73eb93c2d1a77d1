// The one error of the OAuth client: a sign-in that cannot go on. It is a transport failure to callers (the request
// never reached the server with a token), with the HTTP status that started it.
import { TransportFailure } from '../errors.js';

export class OAuthError extends TransportFailure {
  declare readonly code: 'ERR_OAUTH';
  constructor(message: string, httpStatus?: number) {
    super(message, httpStatus, 'ERR_OAUTH');
  }
}
