// The workflows, all on one server: `mrtr serve --fixture workflows --data DIR` serves them (npm run build compiles
// this folder into dist/workflows). Each keeps its own SQLite file under the data directory, created and seeded on
// first start; several processes may share the directory.
import { type ControlEvent, HumanControls, totpSecretsFile } from 'mrtr/controls';
import { McpServer, type McpServerOptions } from 'mrtr/server';
import { MemoryStore, type SharedStore } from 'mrtr/stores';
import { registerCloud } from './cloud/index.js';
import { openDocuments, registerDocuments } from './documents.js';
import { openHelpdesk, registerHelpdesk } from './helpdesk.js';
import { openIdentity, registerIdentity } from './identity.js';
import { openPrivileged, registerPrivileged } from './privileged.js';

export interface WorkflowsOptions {
  /** Where the workflows' databases live. Default `./data`. */
  dataDir?: string;
}

/** The human controls delete_vm and grant_role use: their records' store (share it in a fleet), the TOTP file. */
export interface WorkflowsControlsSetup {
  store: SharedStore;
  totpFile?: string;
  onEvent?: (event: ControlEvent) => void;
  /** Told the controls once made (`mrtr serve` shows their approvals in its console). */
  onControls?: (controls: HumanControls) => void;
}

/**
 * Add the workflows' tools to a server (e.g. beside other tools); `controls` must be attached to that server.
 * Returns a function closing their databases.
 */
export function registerWorkflows(
  server: McpServer,
  controls: HumanControls,
  { dataDir = './data' }: WorkflowsOptions = {},
): () => void {
  const dbs = [openHelpdesk(dataDir), openIdentity(dataDir), openDocuments(dataDir), openPrivileged(dataDir)];
  registerHelpdesk(server, dbs[0]!);
  registerIdentity(server, dbs[1]!);
  registerDocuments(server, dbs[2]!);
  registerPrivileged(server, dbs[3]!, controls);
  dbs.push(registerCloud(server, dataDir, controls).db);
  return () => {
    for (const db of dbs) db.close();
  };
}

/** Human controls on `server`'s pages, with their records in `setup.store` (default: this process's memory). */
export function workflowsControls(server: McpServer, setup?: WorkflowsControlsSetup): HumanControls {
  const controls = new HumanControls({
    store: setup?.store ?? new MemoryStore(),
    ...(setup?.totpFile ? { totp: totpSecretsFile(setup.totpFile) } : {}),
    ...(setup?.onEvent ? { onEvent: setup.onEvent } : {}),
  }).attach(server);
  setup?.onControls?.(controls);
  return controls;
}

/**
 * A server with the workflows only. Their handlers do a few SQLite reads and writes, so a round that takes more than
 * 5 s is stuck: the short limit (and a replay lease just above it) lets a fleet take over a round whose instance
 * died within seconds, not the two minutes of the general defaults.
 */
export function workflowsServer(
  options: Partial<McpServerOptions> & WorkflowsOptions & { controls?: WorkflowsControlsSetup } = {},
): McpServer {
  const { dataDir, controls, rounds, ...serverOptions } = options;
  const server = new McpServer({
    name: 'mrtr-workflows',
    version: '0.1.0',
    instructions:
      'Helpdesk, identity, document search, cloud and privileged-access workflows. Tools ask for what is missing, one round at a time; deletions and grants need a person.',
    ...serverOptions,
    rounds: {
      handlerTimeoutMs: 5_000,
      ...rounds,
      // The lease is the replay guard's, which exists only when a replay store is given.
      ...(rounds?.replay ? { replay: { leaseMs: 7_000, ...rounds.replay } } : {}),
    },
  });
  registerWorkflows(server, workflowsControls(server, controls), { dataDir });
  return server;
}
