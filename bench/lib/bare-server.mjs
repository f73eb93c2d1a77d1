// Child process: the platform's limit. A bare node:http responder that reads
// each POST body and answers with one fixed, small JSON-RPC result. No MCP
// logic at all. Usage: node bench/lib/bare-server.mjs --port P
import { createServer } from 'node:http';
import { listenAsBenchChild } from './child-listen.mjs';

const BODY = Buffer.from(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    result: { resultType: 'complete', content: [{ type: 'text', text: 'ok' }] },
  }),
);
const HEADERS = { 'content-type': 'application/json', 'content-length': String(BODY.length) };

const http = createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  req.on('data', () => {});
  req.on('end', () => res.writeHead(200, HEADERS).end(BODY));
});
listenAsBenchChild(http);
