// The example of docs/compatibility.md: one server, one handler, both generations of client. Run in a fleet, every
// instance gets the same keyring (requestState and session ids open anywhere) and the same Redis (the replay guard,
// ended sessions, and the relay that carries a 2025 client's answer to the instance waiting for it).
// #region fleet
import { McpServer, text } from 'mrtr/server';
import { RedisAnswerRelay, RedisStore } from 'mrtr/stores';
import { z } from 'zod';

export async function startInstance(redisUrl: string, port: number) {
  const store = await RedisStore.connect(redisUrl);
  const relay = await RedisAnswerRelay.connect(redisUrl);
  const server = new McpServer({
    name: 'deploys',
    version: '1.0.0',
    state: { keys: process.env.MRTR_STATE_KEYS }, // the same on every instance
    rounds: { replay: { store } },
    legacyClients: { relay }, // 2025 clients are served by default; this makes their answers fleet-wide
  }).tool(
    { name: 'deploy', description: 'Deploys after a confirmation', input: z.object({ service: z.string() }) },
    async ({ service }, { ask }) => {
      // A 2026-07-28 client gets input_required; a 2025 client gets elicitation/create on its stream.
      if (!(await ask.confirm(`Deploy ${service}?`))) return text('not deployed');
      return text(`deployed ${service}`);
    },
  );
  return server.listen({ port });
}
// #endregion
