// The fixture as a Cloudflare Worker (workerd), bundled by workerd-bundle.ts.
// #region worker
import { env } from 'cloudflare:workers';
import { fixtureApp } from './fixture-server.js';

// The state keys are a secret binding (wrangler secret put MRTR_STATE_KEYS), read while the module loads.
// At the top of the module, not in fetch: workerd compiles code (the schema validators) only while a module loads.
const app = fixtureApp(undefined, env.MRTR_STATE_KEYS);

export default {
  fetch: (request: Request): Promise<Response> => app.fetch(request),
};
// #endregion
