// Pinned measurement: the server child on one core, the load generator on another. On a 2-core machine the two
// otherwise share both cores, and a control that makes the server cheaper can look dearer (or the reverse) because
// the generator's share moved: pinned, the server's CPU time per flow is its own, and flows/s is bounded by one core.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The CPUs this process may run on, from /proc (Cpus_allowed_list, e.g. "0-1" or "0,2-3"). */
export function allowedCpus() {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? '';
    const cpus = [];
    for (const part of list.split(',')) {
      const [a, b] = part.split('-').map(Number);
      if (!Number.isInteger(a)) continue;
      for (let c = a; c <= (Number.isInteger(b) ? b : a); c++) cpus.push(c);
    }
    return cpus;
  } catch {
    return [];
  }
}

const hasTaskset = () => spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * Whether to pin, and where. `wanted`: 'auto' (pin when taskset exists and two CPUs are allowed), true (must pin:
 * throws saying why it cannot), false. The generator takes the first allowed CPU, the server the second.
 */
export function pinPlan(wanted) {
  if (wanted === false) return { pinned: false, why: '--no-pin' };
  // The re-executed run (runPinned) may use only the generator's CPU: the plan comes with it.
  const inherited = /^(\d+):(\d+)$/.exec(process.env.MRTR_BENCH_PINNED ?? '');
  if (inherited) return { pinned: true, generatorCpu: Number(inherited[1]), serverCpu: Number(inherited[2]) };
  const cpus = allowedCpus();
  const problem = !hasTaskset()
    ? 'taskset not found (Debian package util-linux)'
    : cpus.length < 2
      ? `only ${cpus.length} CPU allowed`
      : undefined;
  if (problem) {
    if (wanted === true) throw new Error(`--pin: ${problem}`);
    return { pinned: false, why: problem };
  }
  return { pinned: true, generatorCpu: cpus[0], serverCpu: cpus[1] };
}

/**
 * Run this same command again on the generator's CPU and exit with its status, unless this process already is that
 * run. Re-executing is the only way to set a node process's own affinity without a native module.
 */
export function runPinned(plan) {
  const mark = `${plan.generatorCpu}:${plan.serverCpu}`;
  if (!plan.pinned || process.env.MRTR_BENCH_PINNED === mark) return;
  const run = spawnSync(
    'taskset',
    ['-c', String(plan.generatorCpu), process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env: { ...process.env, MRTR_BENCH_PINNED: mark } },
  );
  process.exit(run.status ?? 1);
}

/** The command that starts a server child: node itself, or node under taskset on the server's CPU. */
export function serverCommand(plan, nodeArgv) {
  if (!plan?.pinned) return [process.execPath, nodeArgv];
  return ['taskset', ['-c', String(plan.serverCpu), process.execPath, ...nodeArgv]];
}
