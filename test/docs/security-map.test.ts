// docs/security.md cites, for each control, the tests that demonstrate it (`file` › “name”). A renamed or deleted
// test must fail here, not leave the page pointing at nothing.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const page = readFileSync('docs/security.md', 'utf8');
// Line breaks inside a citation are the page's wrapping, not part of the name.
const flat = page.replace(/\s*\n\s*/g, ' ');
const cited = [...flat.matchAll(/`(test\/[\w./-]+\.test\.ts)` › “([^”]+)”/g)].map((m) => ({
  file: m[1]!,
  name: m[2]!,
}));
const files = [...flat.matchAll(/`(test\/[\w./-]+\.test\.ts)`/g)].map((m) => m[1]!);

describe('docs/security.md', () => {
  it('cites tests for every control', () => {
    const controls = [...page.matchAll(/^### \d+\. (.+)$/gm)].map((m) => m[1]!);
    expect(controls.length).toBeGreaterThanOrEqual(8);
    for (const section of page.split(/^### /m).slice(1))
      expect(section, section.split('\n')[0]).toMatch(/`test\/[\w./-]+\.test\.ts` › “/);
  });

  it.each(files.map((f) => [f]))('%s exists', (file) => {
    expect(existsSync(file)).toBe(true);
  });

  it.each(cited.map((c) => [c.file, c.name]))('%s has the test “%s”', (file, name) => {
    const source = readFileSync(file, 'utf8').replace(/\s*\n\s*/g, ' ');
    expect(source).toContain(name);
  });
});
