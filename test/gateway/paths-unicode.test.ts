// Every Unicode spelling of a denied path reaches the policy (and the upstream) as one form: NFC, singletons mapped
// (K U+212A, Å U+212B, Ω U+2126), rule literals read the same way, case folded for a case-insensitive upstream. And a
// deny on a directory holds for tools that descend into it from above (`descendingTools`).
import { describe, expect, it } from 'vitest';
import { type GatewayConfig, parseGatewayConfig } from '../../src/gateway/config.js';
import { foldCase, normalizePath, normalizePathArguments } from '../../src/gateway/paths.js';
import { gatewayConfig, useGateway } from './fixtures/gateway-under-test.js';

const caller = { subject: 'ann', roles: ['requester'], scopes: [] };

/** A config over one stdio upstream at /srv/share, with `rules` (YAML) after an allow-everything rule. */
function configWith(rules: string, upstreamExtra = ''): GatewayConfig {
  return parseGatewayConfig(
    `upstreams:
  - name: files
    command: [server-filesystem, /srv/share]
    cwd: /srv/share${upstreamExtra}
rules:
  - tools: [files/*]
    roles: ["*"]
${rules}`,
    'gateway.yaml',
  );
}

/** The decision on `args` as the gateway makes it: prepared (normalised) first, then judged. */
function decide(config: GatewayConfig, tool: string, args: Record<string, unknown>) {
  const spec = config.upstreams[0]!;
  const prepared = normalizePathArguments(args, {
    names: spec.pathArguments,
    base: spec.cwd,
    caseInsensitive: spec.caseInsensitive,
  });
  return { prepared, decision: config.policy.decide(caller, { upstream: 'files', tool }, prepared) };
}

const DENY_PRIVE = `  - tools: [files/*]
    when: >-
      (has(args.path) && (args.path == "/srv/share/privé" || args.path.startsWith("/srv/share/privé/"))) ||
      (has(args.paths) && args.paths.exists(p, p == "/srv/share/privé" || p.startsWith("/srv/share/privé/")))
    deny: true
`;

describe('normalizePath puts a path in NFC', () => {
  it('gives the NFC, NFD and singleton spellings of a name one form', () => {
    expect(normalizePath('/s/prive\u0301')).toBe('/s/privé');
    expect(normalizePath('/s/priv\u00e9')).toBe('/s/privé');
    expect(normalizePath('/s/\u212Aunden')).toBe('/s/Kunden');
    expect(normalizePath('/s/\u212Bngstr\u00f6m')).toBe('/s/\u00C5ngstr\u00f6m');
    expect(normalizePath('/s/\u2126hm')).toBe('/s/\u03A9hm');
  });

  it('keeps compatibility forms as they are: ﬁ is not fi, a full-width letter is not a letter', () => {
    expect(normalizePath('/s/\uFB01le')).toBe('/s/\uFB01le');
    expect(normalizePath('/s/\uFF53ecret')).toBe('/s/\uFF53ecret');
  });

  it('does not take a decomposed dot for a dot', () => {
    expect(normalizePath('/s/a/.\u0301/b')).toBe('/s/a/.\u0301/b');
  });

  it('folds case one character for one, for a case-insensitive upstream', () => {
    expect(foldCase('\u212Aunden')).toBe('kunden');
    expect(foldCase('ΟΔΟΣ')).toBe(foldCase('οδος'));
    expect(foldCase('Straße')).toBe('straße');
    expect(normalizePath('/Srv/Share/SECRET/x', '/Srv/Share', 'path', true)).toBe('/Srv/Share/secret/x');
    expect(normalizePath('/SRV/SHARE/Secret', '/Srv/Share', 'path', true)).toBe('/Srv/Share/secret');
  });
});

describe('a deny on privé holds for every spelling of privé', () => {
  const config = configWith(DENY_PRIVE);

  it('denies NFC, NFD and the é as é + U+0301 inside a longer path', () => {
    for (const path of [
      'privé/a.txt',
      'prive\u0301/a.txt',
      '/srv/share/prive\u0301',
      'x/../prive\u0301/a.txt',
    ]) {
      const { prepared, decision } = decide(config, 'read_text_file', { path });
      expect(decision).toMatchObject({ allow: false, reason: 'denied' });
      expect(prepared.path).toMatch(/^\/srv\/share\/privé/);
    }
  });

  it('denies a mixed read_multiple_files whose second path is privé in NFD', () => {
    const { decision, prepared } = decide(config, 'read_multiple_files', {
      paths: ['public/ok.txt', 'prive\u0301/a.txt'],
    });
    expect(decision).toMatchObject({ allow: false, reason: 'denied' });
    expect(prepared.paths).toEqual(['/srv/share/public/ok.txt', '/srv/share/privé/a.txt']);
  });

  it('allows what is not privé', () => {
    expect(decide(config, 'read_text_file', { path: 'prive/a.txt' }).decision.allow).toBe(true);
  });
});

describe('a rule literal written in NFD or with a singleton denies the NFC path', () => {
  it('reads an NFD literal (as an escape or as characters) in NFC', () => {
    for (const literal of ['/srv/share/prive\\u0301', '/srv/share/prive\u0301']) {
      const config = configWith(`  - tools: [files/*]
    when: 'args.path.startsWith("${literal}")'
    deny: true
`);
      expect(decide(config, 'read_text_file', { path: 'privé/a' }).decision).toMatchObject({ allow: false });
      expect(decide(config, 'read_text_file', { path: 'prive\u0301/a' }).decision).toMatchObject({
        allow: false,
      });
    }
  });

  it('reads K U+212A, Å U+212B and Ω U+2126 in a literal as K, Å and Ω', () => {
    const config = configWith(`  - tools: [files/*]
    when: 'args.path in ["/srv/share/\\u212Aunden", "/srv/share/\\u212B", "/srv/share/\\u2126"]'
    deny: true
`);
    for (const path of ['Kunden', '\u212Aunden', '\u00C5', '\u212B', 'A\u030A', '\u03A9', '\u2126'])
      expect(decide(config, 'get_file_info', { path }).decision, path).toMatchObject({ allow: false });
  });

  it('reads a paths entry in NFC', () => {
    const config = configWith(`  - tools: [files/*]
    paths: ["/srv/share/prive\\u0301"]
    deny: true
`);
    expect(decide(config, 'read_text_file', { path: 'privé/a' }).decision).toMatchObject({ allow: false });
    expect(decide(config, 'read_text_file', { path: 'prive\u0301' }).decision).toMatchObject({
      allow: false,
    });
    expect(decide(config, 'read_text_file', { path: 'public/a' }).decision.allow).toBe(true);
  });

  it('does not change the policy version of a rule written without NFD', () => {
    const nfc = configWith(
      `  - tools: [files/*]\n    when: 'args.path == "/srv/share/privé"'\n    deny: true\n`,
    );
    const nfd = configWith(
      `  - tools: [files/*]\n    when: 'args.path == "/srv/share/prive\u0301"'\n    deny: true\n`,
    );
    expect(nfd.policy.digest).toBe(nfc.policy.digest);
  });
});

describe('a case-insensitive upstream', () => {
  const rules = `  - tools: [files/*]
    when: >-
      (has(args.path) && (args.path == "/srv/share/Secret" || args.path.startsWith("/srv/share/Secret/"))) ||
      (has(args.paths) && args.paths.exists(p, p.startsWith("/srv/share/Secret/"))) ||
      (has(args.path) && args.path.matches("/Kunden/[^/]*[.]CSV$"))
    deny: true
  - tools: [files/*]
    paths: [/srv/share/Archive]
    deny: true
  - tools: [files/*]
    when: 'caller.subject == "ANN"'
    deny: true
`;
  const insensitive = configWith(rules, '\n    caseInsensitive: true');
  const sensitive = configWith(rules);

  it('is denied every case of a denied path, and is sent the path it was judged on', () => {
    for (const path of [
      'secret/a',
      'SECRET/a',
      'sEcReT',
      'Kunden/x.csv',
      '\u212AUNDEN/X.CSV',
      'archive/old',
      'ARCHIVE',
    ]) {
      const { decision, prepared } = decide(insensitive, 'read_text_file', { path });
      expect(decision, path).toMatchObject({ allow: false, reason: 'denied' });
      expect(prepared.path).toBe(String(prepared.path).toLowerCase());
    }
    expect(decide(insensitive, 'read_multiple_files', { paths: ['ok', 'SECRET/a'] }).decision.allow).toBe(
      false,
    );
    expect(decide(insensitive, 'read_text_file', { path: 'public/a' }).decision.allow).toBe(true);
  });

  it('keeps literals that meet no path in their case: caller.subject "ANN" is not ann', () => {
    expect(decide(insensitive, 'read_text_file', { path: 'public/a' }).decision.allow).toBe(true);
  });

  it('is not assumed: a case-sensitive upstream judges SECRET as another name', () => {
    expect(decide(sensitive, 'read_text_file', { path: 'SECRET/a' }).decision.allow).toBe(true);
    expect(decide(sensitive, 'read_text_file', { path: 'secret/a' }).decision.allow).toBe(true);
    expect(decide(sensitive, 'read_text_file', { path: 'Secret/a' }).decision.allow).toBe(false);
  });

  it('is declared with caseInsensitive: true, and refuses a value that is not a bool', () => {
    expect(insensitive.upstreams[0]?.caseInsensitive).toBe(true);
    expect(() => configWith('', '\n    caseInsensitive: yes please')).toThrow(
      /caseInsensitive: must be true or false/,
    );
  });
});

describe('descendingTools: a deny on a directory holds for tools that descend into it', () => {
  const config = configWith(`  - tools: [files/*]
    paths: [/srv/share/secret]
    descendingTools: [files/search_files, files/directory_tree, files/list_directory*]
    reason: secret/ is not for agents
    deny: true
`);

  it('denies search_files, directory_tree and listings from the share root or from secret/ itself', () => {
    for (const [tool, path] of [
      ['search_files', '/srv/share'],
      ['search_files', '.'],
      ['directory_tree', '/'],
      ['list_directory_with_sizes', '/srv/share'],
      ['list_directory', 'secret'],
      ['search_files', 'prive/../secret/x'],
    ] as const)
      expect(decide(config, tool, { path, pattern: 'key' }).decision, `${tool} ${path}`).toMatchObject({
        allow: false,
        reason: 'denied',
        message: 'secret/ is not for agents',
      });
  });

  it('allows those tools beside secret/, and other tools on an ancestor', () => {
    expect(decide(config, 'search_files', { path: 'public', pattern: 'key' }).decision.allow).toBe(true);
    expect(decide(config, 'search_files', { path: 'secret-santa' }).decision.allow).toBe(true);
    expect(decide(config, 'get_file_info', { path: '/srv/share' }).decision.allow).toBe(true);
    expect(decide(config, 'read_text_file', { path: 'secret/key.txt' }).decision.allow).toBe(false);
  });

  it('still lists the tools (a deny on some paths hides no tool)', () => {
    expect(config.policy.visible(caller, { upstream: 'files', tool: 'search_files' })).toBe(true);
  });

  it('is refused on an allow rule, without paths, and with a relative path', () => {
    expect(() =>
      configWith(
        `  - tools: [files/*]\n    roles: ["*"]\n    paths: [/srv/share/public]\n    descendingTools: [files/search_files]\n`,
      ),
    ).toThrow(/descendingTools: is for deny rules/);
    expect(() =>
      configWith(`  - tools: [files/*]\n    descendingTools: [files/search_files]\n    deny: true\n`),
    ).toThrow(/descendingTools: needs paths/);
    expect(() => configWith(`  - tools: [files/*]\n    paths: [secret]\n    deny: true\n`)).toThrow(
      /paths: "secret" must be an absolute path/,
    );
  });

  it('fails closed on a relative path it cannot place (an upstream without cwd)', () => {
    const noCwd = parseGatewayConfig(
      `upstreams:
  - name: files
    url: http://127.0.0.1:9/mcp
rules:
  - tools: [files/*]
    roles: ["*"]
  - tools: [files/*]
    paths: [/srv/share/secret]
    deny: true
`,
      'gateway.yaml',
    );
    const args = normalizePathArguments({ path: 'secret/x' });
    expect(noCwd.policy.decide(caller, { upstream: 'files', tool: 'read_text_file' }, args)).toMatchObject({
      allow: false,
      reason: 'condition_error',
    });
  });
});

describe('a reload that changes how an upstream spells its paths', () => {
  it('keeps the old policy: the running upstream still gets the old spelling', async () => {
    const rules = '  - tools: [up/*]\n    roles: ["*"]\n';
    const g = await useGateway({ upstreamUrl: 'http://127.0.0.1:9/mcp', rules });
    const before = g.gateway.policy.digest;
    const changed = gatewayConfig(
      'http://127.0.0.1:9/mcp',
      `${rules}    name: other\n`,
      '    caseInsensitive: true\n',
    );
    expect(g.gateway.reload(changed)).toEqual([
      'upstreams changed: restart the gateway to use the new upstreams',
      'upstream up changed cwd, pathArguments or caseInsensitive: restart the gateway; the old policy stays in force',
    ]);
    expect(g.gateway.policy.digest).toBe(before);
  });
});
