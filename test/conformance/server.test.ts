// The official conformance suite (server role, revision 2026-07-28) against `mrtr serve --fixture conformance`.
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceRun, runConformance } from '../helpers/conformance.js';

const SCORED = [
  'server-stateless',
  'completion-complete',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'server-sse-multiple-streams',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'sep-2164-resource-not-found',
  'prompts-list',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'dns-rebinding-protection',
  'caching',
  'input-required-result-basic-elicitation',
  'input-required-result-basic-sampling',
  'input-required-result-basic-list-roots',
  'input-required-result-request-state',
  'input-required-result-multiple-input-requests',
  'input-required-result-multi-round',
  'input-required-result-missing-input-response',
  'input-required-result-non-tool-request',
  'input-required-result-result-type',
  'input-required-result-unsupported-methods',
  'input-required-result-tampered-state',
  'input-required-result-capability-check',
  'input-required-result-ignore-extra-params',
  'input-required-result-validate-input',
];

let server: ChildProcess;
let url: string;
let run: ConformanceRun;

beforeAll(async () => {
  server = spawn(process.execPath, ['dist/cli/main.js', 'serve', '--fixture', 'conformance', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  url = await new Promise<string>((resolve, reject) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      const m = /listening on (\S+)/.exec(chunk.toString());
      if (m) resolve(m[1]!.replace('127.0.0.1', 'localhost'));
    });
    server.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  run = await runConformance(['server', '--url', url, '--requirements', '2026-07-28'], 240_000);
}, 300_000);
afterAll(() => server?.kill());

describe('official conformance suite, server role, 2026-07-28', () => {
  it('ran every scored scenario', () => {
    expect([...run.scenarios.keys()].filter((s) => SCORED.includes(s)).sort()).toEqual([...SCORED].sort());
    expect(run.exitCode, run.output).toBe(0);
  });

  // Not scored for 2026-07-28 ("pending"), but we serve what they test.
  for (const scenario of [
    ...SCORED,
    'json-schema-2020-12',
    'http-header-validation',
    'http-custom-header-server-validation',
  ]) {
    it(`${scenario}: every check passes, with no warning`, () => {
      const checks = run.scenarios.get(scenario) ?? [];
      expect(checks.length).toBeGreaterThan(0);
      const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      expect(bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`)).toEqual([]);
    });
  }
});

/**
 * The tasks extension's scenarios (io.modelcontextprotocol/tasks), run one by one: `--requirements` leaves
 * extensions out. tasks-status-notifications has no checks yet (the suite marks it SKIPPED, pending a rewrite of its
 * harness for subscriptions/listen); the others must pass with no warning.
 */
const TASK_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

describe('official conformance suite, the tasks extension', () => {
  const runs = new Map<string, ConformanceRun>();
  beforeAll(async () => {
    for (const scenario of TASK_SCENARIOS)
      runs.set(scenario, await runConformance(['server', '--url', url, '--scenario', scenario], 120_000));
  }, 600_000);

  for (const scenario of TASK_SCENARIOS) {
    it(`${scenario}: every check passes, with no warning`, () => {
      const run = runs.get(scenario)!;
      const checks = run.scenarios.get(scenario) ?? [];
      expect(checks.length, run.output).toBeGreaterThan(0);
      const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
      expect(bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? ''}`)).toEqual([]);
      if (scenario === 'tasks-status-notifications') expect(checks.map((c) => c.status)).toEqual(['SKIPPED']);
      else {
        expect(checks.every((c) => c.status === 'SUCCESS')).toBe(true);
        expect(run.exitCode, run.output).toBe(0);
      }
    });
  }
});
