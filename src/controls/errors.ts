import { html } from '../auth/internal.js';
import { MrtrError } from '../protocol/index.js';
// A tool author's misuse of the controls (no signed-in pages to send people to, an anonymous caller): a bug to fix,
// not a refusal to show the person.
export class ControlsUsageError extends MrtrError {
  override readonly name = 'ControlsUsageError';
  declare readonly code: 'ERR_CONTROLS_USAGE';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_CONTROLS_USAGE', message, options);
  }
}

// What /mrtr/approvals and /mrtr/step-up/<id> show on a server without browser sign-in (e.g. `npm start`).
export const NO_SIGN_IN = html`<p>These pages need browser sign-in, and this server was started without it. Start
it with development tokens (<code>mrtr serve --tokens FILE</code>) or an issuer (<code>--issuer URL</code>).</p>`;
