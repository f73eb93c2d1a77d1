// The fixture as a Cloudflare Worker (workerd), bundled by workerd-bundle.ts.
// #region worker
import { env } from 'cloudflare:workers';
import { fixtureApp } from './fixture-server.js';

// The state keys are a secret binding (wrangler secret put MRTR_STATE_KEYS), read while the module loads.
// At the top of the module, not in fetch: workerd compiles code (the schema validators) only while a module loads.
const keys = env.MRTR_STATE_KEYS;
// No fallback: a worker without its keys must not start on keys anyone could read.
if (!keys) throw new TypeError('MRTR_STATE_KEYS is not set: wrangler secret put MRTR_STATE_KEYS');
const app = fixtureApp(undefined, keys);

export default {
  fetch: (request: Request): Promise<Response> => app.fetch(request),
};
// #endregion
