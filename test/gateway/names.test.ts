// How an upstream tool is named to callers, and read back: `<upstream>__<tool>`, split at the first `__`.
import { describe, expect, it } from 'vitest';
import { exposedName, NAME_SEPARATOR, splitExposedName } from '../../src/gateway/index.js';

describe('exposed tool names', () => {
  it('joins the upstream and the tool with a double underscore', () => {
    expect(NAME_SEPARATOR).toBe('__');
    expect(exposedName('files', 'write_file')).toBe('files__write_file');
  });

  it('reads a name back at the first double underscore: a tool may hold its own', () => {
    expect(splitExposedName('files__write_file')).toEqual({ upstream: 'files', tool: 'write_file' });
    expect(splitExposedName('files__a__b')).toEqual({ upstream: 'files', tool: 'a__b' });
  });

  it('reads nothing from a name with no upstream, no tool or no separator', () => {
    for (const name of ['__write', 'files__', 'files_write', 'files', ''])
      expect(splitExposedName(name), name).toBeUndefined();
  });

  it('withholds a name longer than MCP allows (128), and keeps one exactly at the limit', () => {
    const upstream = 'u'.repeat(30);
    expect(exposedName(upstream, 't'.repeat(128 - 32))).toHaveLength(128);
    expect(exposedName(upstream, 't'.repeat(128 - 31))).toBeUndefined();
  });
});
