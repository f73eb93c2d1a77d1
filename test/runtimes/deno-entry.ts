// The fixture under Deno's own HTTP server: `deno run deno-entry.ts` prints the address it listens on.
// #region deno
import { openStore } from 'mrtr/stores';
import { fixtureApp } from './fixture-server.js';

// #endregion

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Promise<Response>,
  ): unknown;
};

// #region deno
// REPLAY_STORE=redis://HOST:PORT/DB: a store the fleet shares, over Deno's TCP sockets.
const store = process.env.REPLAY_STORE;
const app = fixtureApp(store === undefined ? undefined : await openStore(store));
Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen: ({ port }) => console.log(`listening on http://127.0.0.1:${port}`),
  },
  // Deno's info after the request gives the pages the caller's address.
  (request, info) => app.fetch(request, info),
);
// #endregion
