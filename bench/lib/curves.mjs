// `npm run bench -- --curves`: cost as work grows. flows/s and server CPU µs per flow against questions per flow,
// argument size and concurrency (lib/curves-sweeps.mjs), printed as a table per sweep, written to
// bench/results/curves-<timestamp>.json and drawn in docs/images/bench-curves.svg. See bench/README.md, "Curves".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { measurePoint } from './curve-point.mjs';
import { renderCurves } from './curves-chart.mjs';
import { fitReplayCost, printSweep } from './curves-report.mjs';
import { SWEEPS } from './curves-sweeps.mjs';
import { writeJson } from './report.mjs';
import { authHeaders, REPO_ROOT, SERVER_DEFS, startServer, waitForQuiet } from './servers.mjs';

export const CHART_FILE = join(REPO_ROOT, 'docs', 'images', 'bench-curves.svg');

const PRIME_MS = 2000;

const running = new Set();
// Never leave a server child behind: flows.mjs's signal handlers end with process.exit, which runs this.
process.on('exit', () => {
  for (const s of running) s.killNow();
});

/**
 * One sweep. Its series' servers are started once and kept for all its points, and the points are interleaved
 * (x1 on every series, then x2, …): a slow drift of a shared machine then hits every series alike, and each point
 * begins on a server the previous points warmed up, so a short warm-up suffices. What a child keeps from earlier
 * points (a larger heap, a grown SQLite file in the full stack) is small beside what the sweeps vary. The idle
 * children cost nothing while another is measured.
 */
async function runSweep(name, opts) {
  const sweep = SWEEPS[name];
  console.log(`\n=== ${sweep.title}: ${sweep.xs.map(sweep.xTick).join(', ')}`);
  const series = [];
  try {
    for (const s of sweep.series) {
      const def = SERVER_DEFS[s.server];
      const why = def.missing();
      if (why) {
        console.log(`  ${s.name}: SKIPPED — ${why}`);
        series.push({ ...s, skipped: why, points: [] });
        continue;
      }
      let server;
      try {
        server = await startServer(s.server, { verbose: opts.verbose });
      } catch (e) {
        console.log(`  ${s.name}: FAILED to start — ${e.message}`);
        series.push({ ...s, failed: e.message, points: [] });
        continue;
      }
      running.add(server);
      console.log(`  ${s.name}: pid ${server.pid}, ${server.url}`);
      series.push({ ...s, child: server, extraHeaders: await authHeaders(s.server), points: [] });
    }
    // A fresh child's first seconds are JIT warm-up, more than one point's warm-up covers: load each child for
    // PRIME_MS at the sweep's first point, unmeasured (its flows are still checked).
    for (const s of series) {
      if (!s.child) continue;
      const p = await measurePoint({
        server: s.child,
        extraHeaders: s.extraHeaders,
        sweep,
        x: sweep.xs[0],
        concurrency: sweep.concurrency?.(sweep.xs[0]) ?? opts.concurrency,
        warmupMs: 0,
        measureMs: PRIME_MS,
      });
      if (p.errors || p.serverDied) s.primeFailed = { ...p, x: `${p.x} (priming)` };
    }
    if (opts.quietWait > 0) {
      const q = await waitForQuiet({ maxWaitMs: opts.quietWait * 1000 });
      if (!q.quiet)
        console.log(`  WARNING: machine busy (${(q.busy * 100).toFixed(0)} % of a core) — measuring anyway`);
    }
    for (const x of sweep.xs) {
      const concurrency = sweep.concurrency?.(x) ?? opts.concurrency;
      for (const s of series) {
        if (!s.child || s.primeFailed?.serverDied || s.points.at(-1)?.serverDied) continue;
        process.stdout.write(`  ${sweep.xTick(x).padStart(6)}  ${s.name.padEnd(18)} `);
        const p = await measurePoint({
          server: s.child,
          extraHeaders: s.extraHeaders,
          sweep,
          x,
          concurrency,
          warmupMs: opts.curvesWarmup * 1000,
          measureMs: opts.curvesSeconds * 1000,
        });
        s.points.push(p);
        console.log(
          `${Math.round(p.flowsPerSec)} flows/s, ${Math.round(p.usPerFlow)} µs/flow` +
            `${p.errors ? `, ${p.errors} ERRORS: ${p.errorSamples[0]}` : ''}${p.disturbed ? ' (disturbed)' : ''}`,
        );
      }
    }
  } finally {
    for (const s of series) {
      if (!s.child) continue;
      await s.child.stop();
      running.delete(s.child);
    }
  }
  return {
    title: sweep.title,
    xLabel: sweep.xLabel,
    xs: sweep.xs,
    series: series.map(({ child, extraHeaders, ...s }) => ({
      ...s,
      ...(sweep.replays ? { replayFit: fitReplayCost(s.points) } : {}),
    })),
  };
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** Runs the sweeps `opts.curvesOnly` names; resolves to false when any flow failed its checks or a server died. */
export async function runCurves(opts) {
  const startedAt = new Date().toISOString();
  const cpus = os.cpus();
  console.log(
    `mrtr curves — node ${process.version}, ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ` +
      `warm-up ${opts.curvesWarmup} s + window ${opts.curvesSeconds} s per point, sweeps: ${opts.curvesOnly.join(', ')}, ` +
      (opts.pinned ? `servers pinned to CPU ${opts.pinned.serverCpu}` : 'not pinned'),
  );
  const sweeps = {};
  for (const name of opts.curvesOnly) sweeps[name] = await runSweep(name, opts);

  const failures = [];
  for (const [name, sweep] of Object.entries(sweeps)) {
    printSweep(SWEEPS[name], sweep);
    for (const s of sweep.series) {
      if (s.failed) failures.push(`${name} ${s.name}: failed to start — ${s.failed}`);
      for (const p of [...(s.primeFailed ? [s.primeFailed] : []), ...s.points]) {
        if (p.errors)
          failures.push(`${name} ${s.name} at ${p.x}: ${p.errors} failed flow(s) — ${p.errorSamples[0]}`);
        if (p.serverDied) failures.push(`${name} ${s.name} at ${p.x}: server died`);
      }
    }
  }

  mkdirSync(dirname(CHART_FILE), { recursive: true });
  writeFileSync(
    CHART_FILE,
    renderCurves(SWEEPS, sweeps, {
      commit: gitCommit(),
      cpus: cpus.length,
      seconds: opts.curvesSeconds,
      concurrency: opts.concurrency,
    }),
  );
  console.log(`\nchart written to ${CHART_FILE}`);
  if (opts.json) {
    const file = writeJson(
      join(REPO_ROOT, 'bench', 'results'),
      {
        bench: 'curves',
        startedAt,
        config: {
          seconds: opts.curvesSeconds,
          warmup: opts.curvesWarmup,
          concurrency: opts.concurrency,
          sweeps: opts.curvesOnly,
          pinned: opts.pinned ?? false,
        },
        env: {
          node: process.version,
          platform: `${os.platform()} ${os.release()}`,
          cpus: cpus.length,
          cpuModel: cpus[0]?.model,
          loadavg: os.loadavg(),
          commit: gitCommit(),
        },
        sweeps,
        ok: failures.length === 0,
        failures,
      },
      'curves',
    );
    console.log(`results written to ${file}`);
  }
  if (failures.length) {
    console.error('\n!!! CURVES RUN FAILED — figures above are NOT trustworthy:');
    for (const f of failures) console.error(`!!!   ${f}`);
  }
  return failures.length === 0;
}
