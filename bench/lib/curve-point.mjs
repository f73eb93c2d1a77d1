// One point of a curve (lib/curves.mjs): a warm-up and a measured closed-loop window against a running server child,
// with the child's CPU time over exactly that window, as `npm run bench` measures a row (flows.mjs measureOnce).
import { createFlowDriver } from './flow-driver.mjs';
import { runClosedLoop } from './load.mjs';
import { createRawClient } from './raw-client.mjs';
import { cpuWindow, createSampler } from './servers.mjs';

/** Cores used by processes other than the server and this generator above which a window counts as disturbed. */
const DISTURBED_OTHER = 0.2;

/**
 * @param {object} o
 * @param {{ pid: number, url: string, isAlive: () => boolean }} o.server
 * @param {Record<string, string>} [o.extraHeaders]
 * @param {object} o.sweep   from lib/curves-sweeps.mjs
 * @param {number} o.x       the point
 * @param {number} o.concurrency
 * @param {number} o.warmupMs
 * @param {number} o.measureMs
 */
export async function measurePoint({ server, extraHeaders, sweep, x, concurrency, warmupMs, measureMs }) {
  // A pool per point, as large as its concurrency: connections are opened during the warm-up.
  const client = createRawClient(server.url, concurrency);
  const rounds = sweep.rounds(x);
  const run = createFlowDriver({ post: client.post, tool: sweep.tool, maxRounds: rounds, extraHeaders });
  const tag = Math.random().toString(36).slice(2, 8);
  const op = (worker, seq) => {
    const { args, expect } = sweep.flow(x, worker, seq, tag);
    return run(args, expect);
  };

  const sampler = createSampler(server.pid);
  const window = cpuWindow(sampler);
  const { marks, mark } = window;
  // The window closes on time even though the loop returns only when its last flows (begun inside it) end.
  const endTimer = setTimeout(() => mark('end'), warmupMs + measureMs);
  let load;
  try {
    load = await runClosedLoop({
      kind: 'mrtr',
      post: client.post,
      concurrency,
      warmupMs,
      measureMs,
      isAlive: server.isAlive,
      onMeasureStart: () => {
        sampler.refreshTree();
        mark('start');
      },
      op,
    });
  } finally {
    clearTimeout(endTimer);
    client.close();
  }
  if (!marks.end) mark('end');
  const mem = sampler.stop();

  const { serverCpu, generatorCpu: genCpu, otherCpu } = window.cpu();
  const flowsPerSec = load.opsPerSec;
  const usPerFlow = flowsPerSec > 0 ? (serverCpu / flowsPerSec) * 1e6 : Number.NaN;
  return {
    x,
    concurrency,
    flows: load.ops,
    flowsPerSec,
    roundsPerFlow: rounds,
    roundsPerSec: flowsPerSec * rounds,
    usPerFlow,
    usPerRound: usPerFlow / rounds,
    p50Ms: load.latencyMs.p50,
    p99Ms: load.latencyMs.p99,
    serverCpu,
    generatorCpu: genCpu,
    otherCpu,
    disturbed: otherCpu > DISTURBED_OTHER,
    // VmHWM: the child's peak since it started, earlier points of its series included.
    serverPeakRssMiB: mem.peakHwmMiB,
    errors: load.errors.total + load.warmupErrors.total,
    errorSamples: [...load.warmupErrors.samples, ...load.errors.samples].slice(0, 3),
    serverDied: load.serverDied || !server.isAlive(),
  };
}
