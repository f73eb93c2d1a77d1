// Runs the official conformance CLI (Node 22) and reads the per-check results it writes.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NODE22_BIN = join(import.meta.dirname, '../../.tools/node22/node_modules/.bin');
const CLI = join(import.meta.dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}
export interface ConformanceRun {
  exitCode: number;
  output: string;
  /** scenario name → its checks */
  scenarios: Map<string, Check[]>;
}

export function runConformance(args: string[], timeoutMs: number): Promise<ConformanceRun> {
  if (!existsSync(join(NODE22_BIN, 'node'))) {
    throw new Error(
      'Node 22 for the conformance suite is missing: run `node scripts/ensure-node22.mjs` (npm test does)',
    );
  }
  const out = mkdtempSync(join(tmpdir(), 'mrtr-conformance-'));
  return new Promise((resolve) => {
    execFile(
      join(NODE22_BIN, 'node'),
      [CLI, ...args, '-o', out],
      {
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, PATH: `${NODE22_BIN}:${process.env.PATH}` },
      },
      (error, stdout, stderr) => {
        const scenarios = new Map<string, Check[]>();
        for (const dir of readdirSync(out)) {
          const file = join(out, dir, 'checks.json');
          if (!existsSync(file)) continue;
          // Directory names are `<role>-<scenario>-<timestamp>`.
          const name = dir.replace(/^(server|client)-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
          scenarios.set(name, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
        }
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ exitCode: code, output: `${stdout}\n${stderr}`, scenarios });
      },
    );
  });
}
