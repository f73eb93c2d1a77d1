// The code in README.md and docs/*.md is examples/*.ts, which the type-check compiles: scripts/sync-doc-examples.mjs
// copies each marked region into its page, and this test fails when a page and its example part, or when a code
// block has no marker at all.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/run-cli.js';

const SCRIPT = join(import.meta.dirname, '../../scripts/sync-doc-examples.mjs');
const sync = (...args: string[]) => runCommand(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });

describe('README.md and docs/*.md', () => {
  it('show exactly the code of examples/ (else: node scripts/sync-doc-examples.mjs)', async () => {
    const run = await sync('--check');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});

describe('scripts/sync-doc-examples.mjs', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A repository in a temporary folder with one example and the given README. */
  function repo(readme: string): string {
    const root = mkdtempSync(join(tmpdir(), 'mrtr-doc-examples-'));
    roots.push(root);
    mkdirSync(join(root, 'examples'));
    const example = [
      '// #region body',
      "import { text } from 'mrtr/server';",
      '// #endregion',
      'export function f() {',
      '  // #region body',
      "  return text('hi');",
      '  // #endregion',
      '}',
    ];
    writeFileSync(join(root, 'examples', 'a.ts'), `${example.join('\n')}\n`);
    writeFileSync(join(root, 'README.md'), readme);
    return root;
  }
  const block = (marker: string, code: string) => `${marker}\n\`\`\`ts\n${code}\n\`\`\`\n`;

  it('accepts a block equal to its region: every segment dedented, joined by a blank line', async () => {
    const root = repo(
      block(
        '<!-- example: examples/a.ts#body -->',
        "import { text } from 'mrtr/server';\n\nreturn text('hi');",
      ),
    );
    expect((await sync('--check', '--root', root)).status).toBe(0);
  });

  it('names a block that differs from its source, and rewrites it on request', async () => {
    const root = repo(`# A\n\n${block('<!-- example: examples/a.ts#body -->', 'stale();')}`);
    const check = await sync('--check', '--root', root);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('README.md:4 (examples/a.ts#body): differs from its source');
    expect(check.stderr).toContain('run `node scripts/sync-doc-examples.mjs`');

    const write = await sync('--root', root);
    expect(write.status).toBe(0);
    expect(write.stdout).toBe('updated README.md:4 (examples/a.ts#body)\n');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(
      "```ts\nimport { text } from 'mrtr/server';\n\nreturn text('hi');\n```",
    );
    expect((await sync('--check', '--root', root)).status).toBe(0);
  });

  it('refuses a TypeScript block without a marker, and lets an explicit skip through', async () => {
    const unmarked = await sync('--check', '--root', repo('```ts\nconst x = 1;\n```\n'));
    expect(unmarked.status).toBe(1);
    expect(unmarked.stderr).toContain(
      'README.md:1: a `ts` block without <!-- example: examples/FILE.ts#region -->',
    );

    const skipped = repo(block('<!-- example-skip: a type shape -->', '{ type: string }'));
    expect((await sync('--check', '--root', skipped)).status).toBe(0);
    expect((await sync('--check', '--root', repo('```json\n{}\n```\n```sh\nnpm test\n```\n'))).status).toBe(
      0,
    );
  });

  it('names a missing file, a missing region and a marker with no block after it', async () => {
    const missing = await sync('--check', '--root', repo(block('<!-- example: examples/nope.ts -->', '')));
    expect(missing.stderr).toContain('README.md:1: examples/nope.ts does not exist');
    const noRegion = await sync('--check', '--root', repo(block('<!-- example: examples/a.ts#nope -->', '')));
    expect(noRegion.stderr).toContain("README.md:1: examples/a.ts has no region 'nope'");
    const dangling = await sync(
      '--check',
      '--root',
      repo('<!-- example: examples/a.ts#body -->\nSome text.\n'),
    );
    expect(dangling.stderr).toContain('README.md:1: the marker is not followed by a code block');
    for (const run of [missing, noRegion, dangling]) expect(run.status).toBe(1);
  });
});
