// The official conformance runner (@modelcontextprotocol/conformance, on Node 22) against `mrtr conformance-client`:
// every listed client scenario passes with no failure and no warning.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireBuiltCli } from './helpers.js';

const NODE22 = join(ROOT, '.tools/node22/node_modules/.bin/node');
const RUNNER = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SCENARIOS = [
  'sep-2322-client-request-state',
  'request-metadata',
  'tools_call',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
];

interface Check {
  id: string;
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

const out = mkdtempSync(join(tmpdir(), 'mrtr-conformance-client-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function runScenario(scenario: string): Promise<{ code: number; output: string; checks: Check[] }> {
  const dir = join(out, scenario);
  return new Promise((resolve) => {
    execFile(
      NODE22,
      [
        RUNNER,
        'client',
        '--command',
        `${process.execPath} ${CLI} conformance-client`,
        '--scenario',
        scenario,
        '--spec-version',
        '2026-07-28',
        '-o',
        dir,
      ],
      { cwd: ROOT, timeout: 90_000 },
      (error, stdout, stderr) => {
        const runs = existsSync(dir) ? readdirSync(dir).filter((d) => d.startsWith(scenario)) : [];
        const checks = runs.flatMap((d) => {
          const file = join(dir, d, 'checks.json');
          return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Check[]) : [];
        });
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          output: stdout + stderr,
          checks,
        });
      },
    );
  });
}

describe('official conformance runner, client scenarios (2026-07-28)', () => {
  it.each(SCENARIOS)('%s: all checks pass, no warnings', { timeout: 120_000 }, async (scenario) => {
    if (!existsSync(NODE22))
      throw new Error(
        `Node 22 for the conformance runner is missing at ${NODE22}: run \`npm install --prefix .tools/node22 node@22\``,
      );
    requireBuiltCli();
    const { code, output, checks } = await runScenario(scenario);
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    expect(bad, output).toEqual([]);
    expect(checks.filter((c) => c.status === 'SUCCESS').length, output).toBeGreaterThan(0);
    expect(code, output).toBe(0);
    expect(output).toMatch(/OVERALL: PASSED/);
  });
});
