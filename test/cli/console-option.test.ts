// The console a signed-in `mrtr serve` or `mrtr gateway` gets: it hears of each round only when it shows flows read
// back from an audit trail. Without one, nothing would listen, and every round would be traced for it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditFromFlag } from '../../src/cli/audit-option.js';
import { consoleFromFlags } from '../../src/cli/console-option.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('consoleFromFlags', () => {
  it('shows no flows, and so asks for no round events, without an audit trail', async () => {
    const made = await consoleFromFlags({}, undefined, () => {});
    if ('error' in made) throw new Error(made.error);
    expect(made.showsFlows).toBe(false);
    await made.close();
  });

  it('shows flows read back from a trail it can read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mrtr-console-option-'));
    dirs.push(dir);
    const spec = `jsonl:${join(dir, 'audit.jsonl')}`;
    const audited = await auditFromFlag(spec, { keyFile: join(dir, 'audit-key'), stdio: false }, () => {});
    if ('error' in audited || !audited.trail) throw new Error('no trail');
    const trail = audited.trail;
    const made = await consoleFromFlags({ audit: spec }, trail, () => {});
    if ('error' in made) throw new Error(made.error);
    expect(made.showsFlows).toBe(true);
    await made.close();
    await trail.close();
  });
});
