// Resource-template matching: the same answers a lazy regular expression gives, in linear time. The regex this
// replaced backtracked in cubic time (one 8 KB URI against `{a}-{b}-{c}` held the event loop for ~40 s).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UriTemplate } from '../../src/server/uri-template.js';

/** The previous implementation, kept here as the reference for what a match means. */
function regexMatch(template: string, uri: string): Record<string, string> | undefined {
  const names: string[] = [];
  let source = '^';
  let last = 0;
  for (const m of template.matchAll(/\{([+#]?)([A-Za-z0-9_.,]+)\}/g)) {
    source += template.slice(last, m.index).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    names.push(m[2]!);
    source += m[1] !== '' ? '(.+?)' : '([^/?#]+?)';
    last = m.index + m[0].length;
  }
  source += `${template.slice(last).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
  const m = new RegExp(source).exec(uri);
  if (!m) return undefined;
  const out: Record<string, string> = Object.create(null);
  names.forEach((name, i) => {
    try {
      out[name] = decodeURIComponent(m[i + 1]!);
    } catch {
      out[name] = m[i + 1]!;
    }
  });
  return out;
}

const pieces = ['-', '/', '.', 'a', 'ab', '?', '#', ''];
const templateArb = fc
  .array(fc.tuple(fc.constantFrom(...pieces), fc.boolean()), { minLength: 0, maxLength: 4 })
  .chain((parts) =>
    fc.constantFrom(...pieces).map((tail) => {
      let t = 'x://';
      parts.forEach(([literal, reserved], i) => {
        t += `${literal}{${reserved ? '+' : ''}v${i}}`;
      });
      return t + tail;
    }),
  );
const uriArb = fc
  .array(fc.constantFrom('a', 'b', '-', '/', '.', '?', '#', '%41', '%', '\n'), { maxLength: 14 })
  .map((cs) => `x://${cs.join('')}`);

describe('UriTemplate.match', () => {
  it('gives exactly what the lazy regular expression gave, on random templates and URIs', () => {
    fc.assert(
      fc.property(templateArb, uriArb, (template, uri) => {
        expect(new UriTemplate(template).match(uri)).toEqual(regexMatch(template, uri));
      }),
      { numRuns: 3000 },
    );
  });

  it('matches the documented shapes', () => {
    expect(new UriTemplate('repo://{owner}/{name}/readme').match('repo://mrtr/core/readme')).toEqual({
      owner: 'mrtr',
      name: 'core',
    });
    expect(new UriTemplate('repo://{+owner}/{+path}.md').match('repo://a/b/c/d.md')).toEqual({
      owner: 'a',
      path: 'b/c/d',
    });
    expect(new UriTemplate('mem://{id}').match('mem://a%20b')).toEqual({ id: 'a b' });
    expect(new UriTemplate('mem://{id}').match('mem://')).toBeUndefined();
    expect(new UriTemplate('mem://{id}').match('mem://a/b')).toBeUndefined();
    expect(new UriTemplate('mem://fixed').match('mem://fixed')).toEqual({});
  });

  it('refuses a near-miss of a many-variable template without backtracking (an 8 KB and a 200 KB URI)', () => {
    // The old regex needed ~40 s for the 8 KB case and effectively forever for the 200 KB one: this test would
    // run into the test timeout long before either finished.
    const template = new UriTemplate('x://{a}-{b}-{c}-{d}.json');
    for (const size of [8_000, 200_000]) {
      expect(template.match(`x://${'-'.repeat(size)}.jsonx`)).toBeUndefined();
      expect(new UriTemplate('x://{+a}-{+b}-{+c}').match(`x://${'-'.repeat(size)}\n`)).toBeUndefined();
    }
  });
});
