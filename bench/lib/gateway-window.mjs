// One measured window of `npm run bench -- --gateway`: a closed loop of callers against a running stack
// (lib/gateway-stack.mjs), and what each party spent in it. The front (gateway or proxy) is one process: its own CPU
// is read from /proc/<pid>/stat alone; every other process below the launcher is the upstream (a stdio server the
// front started, or the HTTP server beside it). The launcher itself only waits.
import { performance } from 'node:perf_hooks';
import { runClosedLoop } from './load.mjs';
import { processTree, readCpuTicks, readStatus, USER_HZ } from './proc.mjs';
import { machineCpuSeconds } from './servers.mjs';

/** Cores used by other processes above which a window is marked disturbed. */
const DISTURBED_OTHER = 0.2;

async function readCount(url) {
  try {
    const res = await fetch(url);
    return await res.json();
  } catch {
    return undefined;
  }
}

/** CPU ticks of the front, of the upstream (the rest of the tree) and of all, each pid's last reading kept. */
function treeTicks(server) {
  const frontPid = server.info?.front ?? undefined;
  const pids = processTree(server.pid);
  const last = new Map();
  const read = () => {
    let front = 0;
    let upstream = 0;
    let all = 0;
    for (const pid of pids) {
      const t = readCpuTicks(pid);
      if (t !== null) last.set(pid, t);
      const v = last.get(pid) ?? 0;
      all += v;
      if (pid === frontPid) front += v;
      else if (pid !== server.pid) upstream += v;
    }
    return { front, upstream, all };
  };
  /** Peak resident memory over the window: the front's, and the whole stack's (the launcher left out). */
  const rss = { front: 0, total: 0 };
  const sampleRss = () => {
    let total = 0;
    for (const pid of pids) {
      if (pid === server.pid) continue;
      const kb = readStatus(pid)?.rssKb ?? 0;
      total += kb;
      if (pid === frontPid) rss.front = Math.max(rss.front, kb);
    }
    rss.total = Math.max(rss.total, total);
  };
  return { read, rss, sampleRss, processes: pids.length - 1 };
}

/**
 * Warm up, then measure `measureMs` of `op` at `concurrency` callers. Returns calls/s, latency, CPU µs per call of
 * the front and of the upstream, upstream requests per call (when the upstream counts them), peak RSS, and the CPU
 * other processes used meanwhile (a window above 0.2 cores is `disturbed`).
 */
export async function measureWindow({ server, op, concurrency, warmupMs, measureMs }) {
  let tree;
  const marks = {};
  const mark = (key) => {
    marks[key] = {
      t: performance.now(),
      ticks: tree.read(),
      gen: process.cpuUsage(),
      sys: machineCpuSeconds(),
    };
  };
  // Requests per call are counted over the whole loop, from a quiet start to a quiet end: a call in flight at a
  // window's edge would count its requests on one side and its completion on the other.
  const countUrl = server.info?.count ?? undefined;
  const before = countUrl ? await readCount(countUrl) : undefined;
  let completed = 0;
  const counted = async (worker, seq) => {
    await op(worker, seq);
    completed++;
  };
  let rssTimer;
  const endTimer = setTimeout(() => mark('end'), warmupMs + measureMs);
  const load = await runClosedLoop({
    kind: 'call',
    op: counted,
    concurrency,
    warmupMs,
    measureMs,
    isAlive: server.isAlive,
    onMeasureStart: () => {
      tree = treeTicks(server); // the processes as they are now: a proxy's per-session children exist by then
      tree.sampleRss();
      rssTimer = setInterval(tree.sampleRss, 250);
      mark('start');
    },
  });
  clearTimeout(endTimer);
  clearInterval(rssTimer);
  if (!marks.end) mark('end');
  const { start, end } = marks;
  const elapsed = (end.t - start.t) / 1000;
  const seconds = (k) => (end.ticks[k] - start.ticks[k]) / USER_HZ;
  const generator = (end.gen.user + end.gen.system - start.gen.user - start.gen.system) / 1e6;
  const otherCpu = Math.max(0, (end.sys.task - start.sys.task - seconds('all') - generator) / elapsed);
  const perCall = (s) => (load.ops > 0 ? (s / load.ops) * 1e6 : Number.NaN);
  const after = countUrl ? await readCount(countUrl) : undefined;
  const requests = before && after ? after.requests - before.requests : undefined;
  const byMethod =
    before && after && completed > 0
      ? Object.fromEntries(
          Object.entries(after.byMethod)
            .map(([m, n]) => [m, (n - (before.byMethod[m] ?? 0)) / completed])
            .filter(([, n]) => n > 0),
        )
      : undefined;
  return {
    callers: concurrency,
    calls: load.ops,
    callsPerSec: load.opsPerSec,
    latencyMs: load.latencyMs,
    frontUsPerCall: tree.processes > 0 && server.info?.front ? perCall(seconds('front')) : Number.NaN,
    upstreamUsPerCall: perCall(seconds('upstream')),
    upstreamRequestsPerCall: requests !== undefined && completed > 0 ? requests / completed : Number.NaN,
    upstreamRequestsByMethodPerCall: byMethod,
    frontRssMiB: tree.rss.front / 1024,
    totalRssMiB: tree.rss.total / 1024,
    frontCpu: seconds('front') / elapsed,
    upstreamCpu: seconds('upstream') / elapsed,
    generatorCpu: generator / elapsed,
    otherCpu,
    disturbed: otherCpu > DISTURBED_OTHER,
    processes: tree.processes,
    errors: load.errors.total + load.warmupErrors.total,
    errorSamples: [...load.warmupErrors.samples, ...load.errors.samples].slice(0, 5),
    serverDied: load.serverDied || !server.isAlive(),
  };
}
