// A free TCP port on 127.0.0.1 for a service a test starts (Redis, PostgreSQL): ask the kernel, then let go.
import { createServer, type Server } from 'node:net';

export async function freePort(): Promise<number> {
  const held = await hold(0);
  const { port } = held.address() as { port: number };
  await release(held);
  return port;
}

/**
 * A free port whose next port is free too, for a command that listens on both (the gateway demo puts its tracker on
 * port + 1). Both are held at once before either is let go; a taken neighbour means another try.
 */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = await hold(0);
    const port = (first.address() as { port: number }).port;
    const second = await hold(port + 1).catch(() => undefined);
    await release(first);
    if (second) {
      await release(second);
      return port;
    }
  }
  throw new Error('no two free ports side by side on 127.0.0.1 in 50 tries');
}

function hold(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', () => resolve(probe));
  });
}

const release = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
