// The callers of `npm run bench -- --gateway`: one operation is one tools/call, answered in one round and checked.
// A 2026-07-28 caller sends each call on its own (its `_meta` says who it is); a 2025-11-25 caller opens a session
// first (initialize, notifications/initialized; outside the measured window, as a long-lived client does) and sends
// every call in it. Each worker of the closed loop is one caller.
import { CheckError, callHeaders, checkEcho, parseRpcResponse, REQUEST_META } from './mcp.mjs';

const LEGACY = '2025-11-25';
const BASE_HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

/** The body of one call; a 2025 caller's carries no `_meta`. */
export function callBody(era, id, tool, args) {
  const params =
    era === '2026' ? { name: tool, arguments: args, _meta: REQUEST_META } : { name: tool, arguments: args };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
}

/** A 2025 session: initialize, then notifications/initialized. Returns the headers every call in it carries. */
export async function openSession(url, extra = {}) {
  const headers = { ...BASE_HEADERS, ...extra };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: 'mrtr-bench', version: '0.1.0' },
      },
    }),
  });
  const text = await init.text();
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200)
    throw new CheckError('handshake', `initialize: HTTP ${init.status}`, text.slice(0, 300));
  // A stateless server gives no session: its calls carry only the protocol version.
  const inSession = Object.freeze({
    ...headers,
    ...(session ? { 'mcp-session-id': session } : {}),
    'mcp-protocol-version': LEGACY,
  });
  const ack = await fetch(url, {
    method: 'POST',
    headers: inSession,
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await ack.text();
  if (ack.status !== 202 && ack.status !== 200)
    throw new CheckError('handshake', `notifications/initialized: HTTP ${ack.status}`);
  return inSession;
}

/**
 * The callers of one row against a running stack: `op(worker, seq)` for lib/load.mjs's closed loop. `sessions` keeps
 * a 2025 row's sessions across its callers counts (worker w reuses session w).
 * @param {{ era: '2025'|'2026', tool: string, url: string, post: Function, auth?: object, call?: {path, text} }} o
 */
export async function prepareCallers({ era, tool, url, post, auth, call, concurrency, sessions = [] }) {
  const tag = Math.random().toString(36).slice(2, 8);
  let nextId = 1;
  // One frozen headers object per caller: the raw client caches each header block by object identity.
  let headersOf;
  if (era === '2026') {
    const h = Object.freeze({ ...callHeaders(tool), ...auth });
    headersOf = () => h;
  } else {
    while (sessions.length < concurrency) sessions.push(await openSession(url, auth));
    headersOf = (worker) => sessions[worker];
  }
  // The stdio rows read one file (its text is known); the echo rows send a message of their own each call.
  const op = async (worker, seq) => {
    const id = nextId++;
    const message = `m-${tag}-${worker}-${seq}`;
    const args = call ? { path: call.path } : { message };
    const res = await post(headersOf(worker), callBody(era, id, tool, args));
    checkEcho(parseRpcResponse(res, id), call ? call.text : message);
  };
  return { op, sessions };
}
