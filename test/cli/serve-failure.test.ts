// `mrtr serve` names a configuration that does not fit together as such (exit 2), not as a listening problem.
import { describe, expect, it } from 'vitest';
import { explainStartFailure } from '../../src/cli/serve-failure.js';
import { GatewayConfigError } from '../../src/gateway/index.js';
import { InvalidOptionError, McpServer } from '../../src/server/index.js';

describe('explainStartFailure', () => {
  it('an option the server refuses at start is a configuration error, exit 2, with its reason', async () => {
    // What `--fixture workflows` did without --store: replay options and no replayStore.
    const server = new McpServer({ name: 's', version: '1', replay: { leaseMs: 7_000 } });
    const error = await server.listen({ port: 0 }).then(
      async (endpoint) => {
        await endpoint.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidOptionError);
    const said = explainStartFailure(error, 'cannot listen on 127.0.0.1:3007', 'workflows');
    expect(said.exitCode).toBe(2);
    expect(said.message).toMatch(
      /^mrtr serve: the configuration of fixture 'workflows' does not fit together: /,
    );
    expect(said.message).toMatch(
      /replay options were given without a replayStore .*: pass replayStore, or leave replay out/,
    );
    expect(said.message).not.toMatch(/cannot listen/);
  });

  it('a port in use is still a listening problem, exit 1', () => {
    const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:3007'), {
      code: 'EADDRINUSE',
    });
    expect(explainStartFailure(inUse, 'cannot listen on 127.0.0.1:3007', 'workflows')).toEqual({
      message:
        'mrtr serve: cannot listen on 127.0.0.1:3007: listen EADDRINUSE: address already in use 127.0.0.1:3007',
      exitCode: 1,
    });
  });

  it('a gateway config that cannot work is a usage error of the command that ran, exit 2, said once', () => {
    const error = new GatewayConfigError(
      "upstream tracker: give --resource with the gateway's public https URL",
    );
    expect(explainStartFailure(error, 'cannot start the gateway for g.yaml', 'gateway', 'gateway')).toEqual({
      message: "mrtr gateway: upstream tracker: give --resource with the gateway's public https URL",
      exitCode: 2,
    });
  });
});
