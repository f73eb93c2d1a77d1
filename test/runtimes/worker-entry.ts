// The fixture as a Cloudflare Worker (workerd), bundled by workerd-bundle.ts.
// #region worker
import { fixtureApp } from './fixture-server.js';

// At the top of the module, not in fetch: workerd compiles code (the schema validators) only while a module loads.
const app = fixtureApp();

export default {
  fetch: (request: Request): Promise<Response> => app.fetch(request),
};
// #endregion
