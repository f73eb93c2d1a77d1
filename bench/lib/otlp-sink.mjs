// A local OTLP/HTTP receiver for the tracing row: it reads each export whole, answers 200 and counts the spans'
// requests and bytes, so the traced server really serializes and sends every span (nothing is dropped unsent).
import { createServer } from 'node:http';

export async function startOtlpSink() {
  const seen = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk) => {
      seen.bytes += chunk.length;
    });
    req.on('end', () => {
      seen.requests++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
