// The workflows, all on one server: `mrtr serve --fixture workflows --data DIR` serves them (npm run build compiles
// this folder into dist/workflows). Each keeps its own SQLite file under the data directory, created and seeded on
// first start; several processes may share the directory.
import { McpServer, type McpServerOptions } from 'mrtr/server';
import { registerCloud } from './cloud/index.js';
import { openDocuments, registerDocuments } from './documents.js';
import { openHelpdesk, registerHelpdesk } from './helpdesk.js';
import { openIdentity, registerIdentity } from './identity.js';

export interface WorkflowsOptions {
  /** Where the workflows' databases live. Default `./data`. */
  dataDir?: string;
}

/** Add the workflows' tools to a server (e.g. beside other tools); returns a function closing their databases. */
export function registerWorkflows(
  server: McpServer,
  { dataDir = './data' }: WorkflowsOptions = {},
): () => void {
  const dbs = [openHelpdesk(dataDir), openIdentity(dataDir), openDocuments(dataDir)];
  registerHelpdesk(server, dbs[0]!);
  registerIdentity(server, dbs[1]!);
  registerDocuments(server, dbs[2]!);
  dbs.push(registerCloud(server, dataDir).db);
  return () => {
    for (const db of dbs) db.close();
  };
}

/**
 * A server with the workflows only. Their handlers do a few SQLite reads and writes, so a round that takes more than
 * 5 s is stuck: the short limit (and a replay lease just above it) lets a fleet take over a round whose instance
 * died within seconds, not the two minutes of the general defaults.
 */
export function workflowsServer(options: Partial<McpServerOptions> & WorkflowsOptions = {}): McpServer {
  const { dataDir, ...serverOptions } = options;
  const server = new McpServer({
    name: 'mrtr-workflows',
    version: '0.1.0',
    instructions:
      'Helpdesk, identity, document search and cloud workflows. Tools ask for what is missing, one round at a time.',
    handlerTimeoutMs: 5_000,
    ...serverOptions,
    replay: { leaseMs: 7_000, ...serverOptions.replay },
  });
  registerWorkflows(server, { dataDir });
  return server;
}
