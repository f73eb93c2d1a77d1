// docs/runtimes.md: the parts it says need Node do use a Node-only module, and a worker that builds a server loads
// none of those modules when it starts (the page's promise that the fetch path does without them).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { workerStartupGraph } from '../runtimes/workerd-bundle.js';

const ROOT = join(import.meta.dirname, '../..');
const page = readFileSync(join(ROOT, 'docs/runtimes.md'), 'utf8');

/** The rows of the "What needs Node" table: the part, its module and the Node-only module it needs. */
function nodeOnlyParts(): Array<{ part: string; module: string; needs: string }> {
  const section = page.split('## What needs Node')[1]!.split('\n## ')[0]!;
  return [...section.matchAll(/^\| (.+?) \| `([^`]+)` \| `([^`]+)`.* \|$/gm)].map((m) => ({
    part: m[1]!,
    module: m[2]!,
    needs: m[3]!,
  }));
}

describe('docs/runtimes.md, what needs Node', () => {
  const parts = nodeOnlyParts();
  let startup: { files: string[]; external: string[] };
  beforeAll(async () => {
    startup = await workerStartupGraph();
  });

  it('names the parts', () => {
    expect(parts.map((p) => p.needs)).toEqual([
      'better-sqlite3',
      'better-sqlite3',
      'pg',
      'node:child_process',
      'node:child_process',
    ]);
  });

  it('each part’s module imports what the page says it needs', () => {
    for (const { module, needs } of parts) {
      const source = readFileSync(join(ROOT, module), 'utf8');
      expect(source, module).toMatch(new RegExp(`(from |require\\(|import\\()'${needs}'`));
    }
  });

  it('a worker that builds a server loads none of them when it starts', () => {
    // The graph is real: it holds the package's server entry (under dist/, or the build directory dist/ links to).
    expect(startup.files.some((f) => /(^|\/)\.?dist[^/]*\/server\/index\.js$/.test(f))).toBe(true);
    for (const { needs } of parts) {
      const bare = needs.replace(/^node:/, '');
      expect(startup.external, needs).not.toContain(needs);
      expect(startup.external, needs).not.toContain(bare);
      expect(startup.files.filter((f) => f.includes(`node_modules/${needs}/`))).toEqual([]);
    }
  });
});
