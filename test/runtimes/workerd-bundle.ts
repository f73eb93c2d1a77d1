// The worker as a deployment would have it: worker-entry.ts bundled by esbuild into one ES module, beside a workerd
// config (capnp) that serves it on `port` with Node compatibility. Nothing is fetched: the bundle is all local.
import { writeFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { STATE_KEYS } from './fixture-server.js';

/** workerd accepts compatibility dates up to its own release; this one is before the installed 2026-12-01. */
export const COMPATIBILITY_DATE = '2026-11-01';

/** How a deployment bundles the worker; docs/runtimes.md names these settings. */
export const WORKER_BUILD: BuildOptions = {
  entryPoints: [join(import.meta.dirname, 'worker-entry.ts')],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser'],
  // Node's modules come from workerd's nodejs_compat, under either name.
  external: [...builtinModules, 'node:*', 'cloudflare:*'],
  // The published package (dist/, through package.json's exports), not tsconfig's paths to the sources.
  tsconfigRaw: {},
  logLevel: 'error',
};

/** The files the worker loads when it starts (static imports from the entry; dynamic ones wait for their use). */
export async function workerStartupGraph(): Promise<{ files: string[]; external: string[] }> {
  const { metafile } = await build({ ...WORKER_BUILD, write: false, metafile: true, outdir: 'unused' });
  return staticGraph(metafile);
}

function staticGraph(metafile: Metafile): { files: string[]; external: string[] } {
  const files = new Set<string>();
  const external = new Set<string>();
  const entry = Object.keys(metafile.inputs).find((f) => f.endsWith('worker-entry.ts'))!;
  const todo = [entry];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    for (const i of metafile.inputs[file]?.imports ?? []) {
      if (i.kind === 'dynamic-import') continue;
      if (i.external) external.add(i.path);
      else todo.push(i.path);
    }
  }
  return { files: [...files], external: [...external] };
}

/** `withKeys: false` leaves the state keys' binding out, as a deployment that forgot the secret would. */
export async function bundleWorker(dir: string, port: number, withKeys = true): Promise<string> {
  await build({ ...WORKER_BUILD, outfile: join(dir, 'worker.js') });
  const config = join(dir, 'config.capnp');
  await writeFile(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [ ${withKeys ? `(name = "MRTR_STATE_KEYS", text = "${STATE_KEYS}")` : ''} ],
);
`,
  );
  return config;
}
