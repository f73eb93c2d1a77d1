// The fixture server on Node: the same fetch handler as on the other runtimes, behind node:http.

import { fixtureApp } from './fixture-server.js';
import { describeRuntime } from './flow.js';
import { serveOnNode } from './node-serve.js';

describeRuntime('node', () => serveOnNode(fixtureApp()), { legacyClient: true });
