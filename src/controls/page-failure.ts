// What a page answers when its route threw, once for the step-up, approval and passkey pages and the console: a
// person's mistake (a body or form that cannot be read) is named to them; the server's own fault goes to the operator.

import { FormError } from '../auth/index.js';
import { html, sendPage } from '../auth/internal.js';
import type { PageResponse } from '../protocol/index.js';
import { ControlsUsageError, NO_SIGN_IN } from './errors.js';
import { BodyError, sendJson } from './http-bits.js';

/**
 * Answer `error` on `res`: 400 for a body or form the person sent wrong, 404 on a server without sign-in, else 500
 * (`serverFault` is told first). A response already under way is cut, so the person does not wait on it for ever.
 */
export function answerPageFailure(
  res: PageResponse,
  error: unknown,
  serverFault: (error: unknown) => void,
  nothingDone = 'Nothing was recorded.',
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  if (error instanceof BodyError) sendJson(res, 400, { error: 'bad_request', message: error.message });
  else if (error instanceof FormError) sendPage(res, 400, 'Not a form', html`<p>${error.message}</p>`);
  else if (error instanceof ControlsUsageError) sendPage(res, 404, 'No sign-in on this server', NO_SIGN_IN);
  else {
    serverFault(error);
    sendPage(res, 500, 'Something went wrong', html`<p>${nothingDone} Try again.</p>`);
  }
}
