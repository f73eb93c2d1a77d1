// `--metrics PORT` on `mrtr serve` and `mrtr gateway`: Prometheus text at http://127.0.0.1:PORT/metrics (or
// --metrics-host), from a registry of mrtr's own. The listener is made before anything else starts, so a port in use
// is said at once; it does not keep the process alive by itself.
import { createServer, type Server } from 'node:http';
import { MrtrMetrics } from '../metrics/index.js';

export const METRICS_FLAG_OPTIONS = {
  metrics: { type: 'string' },
  'metrics-host': { type: 'string' },
} as const;

export interface MetricsFlags {
  metrics?: string;
  'metrics-host'?: string;
}

/** The path Prometheus scrapes (kept as is: checks outside this repository use it). */
export const METRICS_PATH = '/metrics';

export interface ServedMetrics {
  readonly metrics: MrtrMetrics;
  readonly url: string;
  close(): Promise<void>;
}

/** Read the flags; listen when --metrics is given. Undefined without it; `error` names the flag and what is wrong. */
export async function metricsFromFlags(
  values: MetricsFlags,
): Promise<{ served: ServedMetrics | undefined } | { error: string }> {
  const given = values.metrics;
  const host = values['metrics-host'];
  if (given === undefined) {
    if (host !== undefined) return { error: '--metrics-host needs --metrics PORT' };
    return { served: undefined };
  }
  if (!/^\d{1,5}$/.test(given) || Number(given) > 65535)
    return { error: `--metrics must be a port from 0 to 65535, got '${given}'` };
  if (host === '') return { error: '--metrics-host is empty: give a host or address to listen on' };
  const metrics = new MrtrMetrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: scrape ${METRICS_PATH}\n`);
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (error: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`metrics failed: ${(error as Error).message}\n`),
    );
  });
  const bound = host ?? '127.0.0.1';
  try {
    await listen(server, bound, Number(given));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? 'the port is in use'
        : code === 'EACCES'
          ? 'not allowed to listen there'
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? `${bound} is not an address of this machine`
            : (error as Error).message;
    return { error: `--metrics ${given}: cannot listen on ${bound}:${given}: ${why}` };
  }
  server.unref();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : Number(given);
  const shown = bound.includes(':') ? `[${bound}]` : bound;
  return {
    served: {
      metrics,
      url: `http://${shown}:${port}${METRICS_PATH}`,
      close: () => new Promise<void>((done) => server.close(() => done())),
    },
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
