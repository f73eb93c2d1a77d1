// One spelling per path: every way of writing a path argument reaches the policy (and the upstream) as the same
// normal form, so a condition on it cannot be walked around.
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../../src/gateway/config.js';
import { DEFAULT_PATH_ARGUMENTS, normalizePath, normalizePathArguments } from '../../src/gateway/paths.js';

const base = '/srv/share';

describe('normalizePathArguments', () => {
  it('gives every spelling of a path one form', () => {
    const spellings = [
      'secret/key.txt',
      'public/../secret/key.txt',
      './secret/key.txt',
      'secret//key.txt',
      'secret/./key.txt',
      '/srv/share/secret/key.txt',
      '//srv//share/secret/key.txt',
      '/srv/share/public/../secret/key.txt',
      '/srv/./share/secret/key.txt/',
      '/srv/share/secret/key.txt//',
    ];
    for (const path of spellings)
      expect(normalizePathArguments({ path }, { base })).toEqual({ path: '/srv/share/secret/key.txt' });
  });

  it('keeps relative paths relative, normalized, when there is no base', () => {
    expect(normalizePathArguments({ path: 'public/../secret/' })).toEqual({ path: 'secret' });
    expect(normalizePathArguments({ path: '../outside' })).toEqual({ path: '../outside' });
    expect(normalizePathArguments({ path: '/../../etc/passwd' })).toEqual({ path: '/etc/passwd' });
    expect(normalizePathArguments({ path: '/' })).toEqual({ path: '/' });
  });

  it('resolves a climb out of the base to where it lands', () => {
    expect(normalizePathArguments({ path: '../../etc/passwd' }, { base })).toEqual({ path: '/etc/passwd' });
  });

  it('normalizes arrays of paths, the default names and names ending in path', () => {
    expect(
      normalizePathArguments(
        {
          paths: ['a/../b', '/x//y/', 7],
          source: '/a/./b',
          destination: '/c/d/',
          targetPath: '/e/../f',
          output_path: '//g',
          basepath: 'h/',
        },
        {},
      ),
    ).toEqual({
      paths: ['b', '/x/y', 7],
      source: '/a/b',
      destination: '/c/d',
      targetPath: '/f',
      output_path: '/g',
      basepath: 'h',
    });
    expect(DEFAULT_PATH_ARGUMENTS).toContain('file_path');
  });

  it('leaves other arguments, and other kinds of values, as they are', () => {
    const args = {
      content: 'see ../notes//draft/',
      query: 'a/../b',
      path: { nested: '/a/../b' },
      count: 3,
    };
    expect(normalizePathArguments(args, { base })).toEqual(args);
  });

  it('with names given, normalizes those and only those', () => {
    expect(normalizePathArguments({ target: 'a/../b', path: 'c/../d' }, { names: ['target'] })).toEqual({
      target: 'b',
      path: 'c/../d',
    });
    expect(normalizePathArguments({ path: 'c/../d' }, { names: [] })).toEqual({ path: 'c/../d' });
  });

  it('does not change the arguments it is given', () => {
    const args = { path: 'a/../b' };
    normalizePathArguments(args, { base });
    expect(args).toEqual({ path: 'a/../b' });
  });

  it('keeps an argument named __proto__ an argument', () => {
    const out = normalizePathArguments(JSON.parse('{"__proto__": {"polluted": true}, "path": "a/"}'));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'path']);
    expect(out.path).toBe('a');
  });

  it('refuses a path with a NUL in it', () => {
    expect(() => normalizePathArguments({ path: '/srv/share/public\0/../secret' })).toThrow(
      'argument "path" contains a NUL character; no path may',
    );
    expect(() => normalizePathArguments({ paths: ['ok', 'bad\0'] })).toThrow(
      /argument "paths" contains a NUL/,
    );
    expect(() => normalizePath('a\0b')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });
});

describe('a condition on a path holds for every spelling of it', () => {
  const config = parseGatewayConfig(
    `upstreams:
  - name: files
    command: [server-filesystem, /srv/share]
    cwd: /srv/share
rules:
  - tools: [files/*]
    roles: ["*"]
  - tools: [files/*]
    when: 'has(args.path) && args.path.startsWith("/srv/share/secret")'
    deny: true
`,
    'gateway.yaml',
  );
  const upstream = config.upstreams[0]!;
  const caller = { subject: 'ann', roles: ['requester'], scopes: [] };

  it('denies the secret however it is written, and allows what is not secret', () => {
    for (const path of [
      '/srv/share/secret/key.txt',
      'public/../secret/key.txt',
      '//srv//share/secret/key.txt',
      '/srv/share/./secret',
      '/srv/share/secret/',
      'secret',
    ]) {
      const args = normalizePathArguments({ path }, { names: upstream.pathArguments, base: upstream.cwd });
      expect(config.policy.decide(caller, { upstream: 'files', tool: 'read_file' }, args)).toMatchObject({
        allow: false,
        reason: 'denied',
      });
    }
    const args = normalizePathArguments({ path: 'public/readme' }, { base: upstream.cwd });
    expect(config.policy.decide(caller, { upstream: 'files', tool: 'read_file' }, args).allow).toBe(true);
  });
});
