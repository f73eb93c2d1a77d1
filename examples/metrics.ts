// The example of docs/observability.md: a server whose rounds are counted, with /metrics served beside it.
// test/metrics/metrics.test.ts drives it.
// #region metrics
import { createServer } from 'node:http';
import { MrtrMetrics } from 'mrtr/metrics';
import { McpServer, text } from 'mrtr/server';

export const metrics = new MrtrMetrics();

export const server = new McpServer({
  name: 'counted',
  version: '1.0.0',
  rounds: { observers: [metrics.observer] },
}).tool({ name: 'ping', description: 'Answers pong' }, async () => text('pong'));

// Prometheus scrapes this listener; the MCP endpoint is server.listen() as usual.
export const scrapes = createServer(async (_req, res) => {
  res.setHeader('content-type', metrics.contentType);
  res.end(await metrics.text());
});
// #endregion
