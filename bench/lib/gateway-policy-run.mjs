// The gateway policy's µs per decision (bench/gateway-policy.mjs, the same 100 rules the gateway rows serve with every
// control on), measured in a child process of its own so the bench's load generator does not disturb it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** `{ rows, ruleCount, runs, decisions }`, or `{ skipped }` without a build, or `{ failed }`. */
export function measurePolicy(repoRoot) {
  if (!existsSync(join(repoRoot, 'dist', 'gateway', 'policy', 'index.js'))) return { skipped: 'not built' };
  const run = spawnSync(
    process.execPath,
    [join(repoRoot, 'bench', 'gateway-policy.mjs'), '--runs=5', '--decisions=5000', '--json'],
    { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 },
  );
  if (run.status !== 0)
    return { failed: `exit ${run.status}: ${(run.stderr || run.error?.message || '').trim()}` };
  return JSON.parse(run.stdout.trim().split('\n').at(-1));
}

/** Print the policy's figures (goal ≤ 100 µs per decision). */
export function printPolicy(policy) {
  if (policy?.rows) {
    console.log(
      `\ngateway policy of ${policy.ruleCount} rules, µs per decision (median of ${policy.runs} × ${policy.decisions}, in process; goal ≤ 100 µs):`,
    );
    for (const { label, us } of policy.rows)
      console.log(`  ${label.padEnd(52)} ${us.toFixed(2).padStart(8)} µs`);
  } else if (policy?.skipped) console.log('\ngateway policy: SKIPPED — dist/ not built (npm run build)');
}
