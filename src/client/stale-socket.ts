// A keep-alive socket can die while it sits idle in the agent's pool: the server closes it after its keep-alive
// timeout (5 s on Node's http server), and a busy client takes the socket before it has read the server's FIN.
// The next request written on it fails with ECONNRESET or EPIPE before any answer. Node marks such a request
// `reusedSocket` for exactly this case. A client that signs in between two calls waits long enough to meet it
// every time the machine is loaded, so it is sent once more on another socket instead of failing the call.
//
// Node's documentation advises sending again: a server that closed the socket read nothing from it. (A server that
// read a request and then died without a word looks the same; a round it had begun is refused the second time by
// its replay guard, since a round's state is consumed once.) Nothing is sent again once any answer has begun.
import type http from 'node:http';

/** How many times one request is sent again after meeting a dead pooled socket (each try uses up one). */
export const STALE_SOCKET_RETRIES = 3;

const STALE_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** Did `req` fail only because the pooled socket it was written on had been closed by the server? */
export function failedOnStaleSocket(req: http.ClientRequest, error: NodeJS.ErrnoException): boolean {
  return req.reusedSocket && STALE_CODES.has(error.code ?? '');
}
