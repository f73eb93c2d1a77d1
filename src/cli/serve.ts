// `mrtr serve`: run one of the built-in servers over Streamable HTTP or stdio.
import { parseArgs } from 'node:util';
import { benchServer } from '../fixtures/bench.js';
import { conformanceServer } from '../fixtures/conformance.js';
import { exampleServer } from '../fixtures/example.js';
import type { McpServer } from '../server/index.js';

const FIXTURES: Record<string, () => McpServer> = {
  example: () => exampleServer(),
  conformance: () => conformanceServer(),
  bench: () => benchServer(),
};

export async function serveCommand(argv: string[]): Promise<number | undefined> {
  let values: { fixture?: string; host?: string; port?: string; stdio?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        fixture: { type: 'string', default: 'example' },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '3000' },
        stdio: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr serve: ${(error as Error).message}\n`);
    return 2;
  }
  const make = FIXTURES[values.fixture ?? 'example'];
  if (!make) {
    process.stderr.write(
      `mrtr serve: unknown fixture '${values.fixture}' (choose ${Object.keys(FIXTURES).join(', ')})\n`,
    );
    return 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`mrtr serve: --port must be an integer from 0 to 65535, got '${values.port}'\n`);
    return 2;
  }
  const server = make();
  if (values.stdio) {
    await server.stdio();
    return 0;
  }
  try {
    const endpoint = await server.listen({ host: values.host, port });
    process.stdout.write(`listening on ${endpoint.url}\n`);
    const stop = () => endpoint.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (error) {
    process.stderr.write(
      `mrtr serve: cannot listen on ${values.host}:${port}: ${(error as Error).message}\n`,
    );
    return 1;
  }
  return undefined;
}
