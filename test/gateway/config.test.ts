// The gateway's config file: what a good one gives, and for each kind of mistake an operator can make, an error
// that starts with FILE:LINE: and names the key and the fault.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GatewayConfigError, loadGatewayConfig, parseGatewayConfig } from '../../src/gateway/config.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** The message of the GatewayConfigError `yaml` gives (read as gateway.yaml). */
function errorOf(yaml: string): string {
  try {
    parseGatewayConfig(yaml, 'gateway.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    expect((error as GatewayConfigError).code).toBe('ERR_GATEWAY_CONFIG');
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

const UPSTREAMS = `upstreams:
  - name: files
    command: [server-filesystem, /srv]
`;
/** A config with one good upstream (lines 1-3) and `rules` from line 4. */
const withRules = (rules: string) => `${UPSTREAMS}rules:\n${rules}`;

describe('a good config', () => {
  it('gives the upstreams, with relative paths resolved against the config file, and the compiled policy', () => {
    const file = join(FIXTURES, 'gateway.yaml');
    const config = loadGatewayConfig(file);
    expect(config.file).toBe(resolve(file));
    expect(config.upstreams).toEqual([
      {
        name: 'files',
        command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/srv/share'],
        cwd: join(FIXTURES, 'share'),
        env: { NODE_OPTIONS: '--max-old-space-size=256' },
        pathArguments: ['path', 'source', 'destination', 'paths'],
        credentials: { type: 'none' },
      },
      {
        name: 'tickets',
        url: 'http://127.0.0.1:9000/mcp',
        credentials: { type: 'static', file: join(FIXTURES, 'secret') },
      },
    ]);
    expect(config.policy.ruleCount).toBe(5);
    expect(config.policy.controlsUsed()).toEqual(['consent', 'approval']);
    const requester = { subject: 'ann', roles: ['requester'], scopes: [] };
    expect(config.policy.decide(requester, { upstream: 'files', tool: 'move_file' }, {})).toMatchObject({
      allow: true,
      rules: ['moves need approval'],
      require: ['approval'],
      approval: { role: 'approver', approvals: 1, expiresInMs: 24 * 3_600_000 },
    });
  });

  it('reads JSON, and step-up as a spelling of step_up', () => {
    const config = loadGatewayConfig(join(FIXTURES, 'gateway.json'));
    expect(config.upstreams[0]).toEqual({
      name: 'tickets',
      url: 'https://tickets.example/mcp',
      credentials: { type: 'none' },
    });
    expect(config.policy.controlsUsed()).toEqual(['step_up']);
  });

  it('reads token-exchange credentials, resolving the secret file against the config directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `upstreams:
  - name: tickets
    url: https://tickets.example/mcp
    credentials:
      type: token-exchange
      issuer: https://id.example
      clientId: gw
      clientSecretFile: secrets/gw
      audience: https://tickets.example
      scope: "tickets.read tickets.write"
rules: []
`,
    );
    expect(loadGatewayConfig(file).upstreams[0]?.credentials).toEqual({
      type: 'token-exchange',
      issuer: 'https://id.example',
      clientId: 'gw',
      clientSecretFile: join(dir, 'secrets/gw'),
      audience: 'https://tickets.example',
      scope: 'tickets.read tickets.write',
    });
  });

  it('gives rules without a name the name "rule N (line L)"', () => {
    const config = parseGatewayConfig(withRules('  - tools: [files/*]\n    roles: ["*"]\n'), 'gateway.yaml');
    const decision = config.policy.decide(
      { subject: 's', roles: [], scopes: [] },
      { upstream: 'files', tool: 'x' },
      {},
    );
    expect(decision).toMatchObject({ allow: true, rules: ['rule 1 (line 5)'] });
  });

  it('takes YAML anchors and aliases', () => {
    const config = parseGatewayConfig(
      withRules(
        '  - tools: [files/read_*]\n    roles: &staff [dev, ops]\n  - tools: [files/list_*]\n    roles: *staff\n',
      ),
      'gateway.yaml',
    );
    const ops = { subject: 'o', roles: ['ops'], scopes: [] };
    expect(config.policy.decide(ops, { upstream: 'files', tool: 'list_directory' }, {}).allow).toBe(true);
  });
});

describe('a config that cannot be used names the file, the line, the key and the fault', () => {
  it('a file that cannot be read', () => {
    expect(() => loadGatewayConfig('/nonexistent/gateway.yaml')).toThrow(
      '/nonexistent/gateway.yaml:1: cannot read the config file (ENOENT)',
    );
  });

  it('text that is not YAML', () => {
    expect(errorOf('upstreams:\n  - name: files\n   command: [x\n')).toMatch(
      /^gateway\.yaml:3: not valid YAML: /,
    );
  });

  it('a key given twice', () => {
    expect(errorOf(`${UPSTREAMS}rules: []\nrules: []\n`)).toMatch(
      /^gateway\.yaml:5: not valid YAML: Map keys must be unique/,
    );
  });

  it('an empty file, and a missing section', () => {
    expect(errorOf('')).toBe('gateway.yaml:1: the config is empty; it needs upstreams and rules');
    expect(errorOf(UPSTREAMS)).toMatch(/^gateway\.yaml:1: rules: missing; /);
    expect(errorOf('rules: []\n')).toMatch(/^gateway\.yaml:1: upstreams: missing; /);
  });

  it('an unknown key at the top', () => {
    expect(errorOf(`${UPSTREAMS}rules: []\nlisten: 8080\n`)).toBe(
      'gateway.yaml:5: unknown key "listen" (choose upstreams, rules)',
    );
  });

  it('an unknown key in an upstream', () => {
    expect(errorOf('upstreams:\n  - name: files\n    comand: [x]\nrules: []\n')).toBe(
      'gateway.yaml:3: upstreams[0]: unknown key "comand" (choose name, url, command, cwd, env, pathArguments, caseInsensitive, credentials)',
    );
  });

  it('an upstream name that is not one', () => {
    expect(errorOf('upstreams:\n  - name: Files_1\n    command: [x]\nrules: []\n')).toBe(
      'gateway.yaml:2: upstreams[0].name: "Files_1" is not an upstream name: 1 to 32 lowercase letters, digits and -, not starting with -',
    );
  });

  it('two upstreams of one name', () => {
    expect(errorOf(`${UPSTREAMS}  - name: files\n    url: http://x/mcp\nrules: []\n`)).toBe(
      'gateway.yaml:4: upstreams[1].name: "files" is already upstreams[0]',
    );
  });

  it('an upstream with both url and command, or neither', () => {
    expect(errorOf('upstreams:\n  - name: a\n    url: http://x/mcp\n    command: [x]\nrules: []\n')).toBe(
      'gateway.yaml:2: upstreams[0]: give url (Streamable HTTP) or command (stdio), not both',
    );
    expect(errorOf('upstreams:\n  - name: a\nrules: []\n')).toBe(
      'gateway.yaml:2: upstreams[0]: missing url (Streamable HTTP) or command (stdio)',
    );
  });

  it('a url that is not http or https', () => {
    expect(errorOf('upstreams:\n  - name: a\n    url: ftp://x/mcp\nrules: []\n')).toBe(
      'gateway.yaml:3: upstreams[0].url: "ftp://x/mcp" must be an http or https URL',
    );
    expect(errorOf('upstreams:\n  - name: a\n    url: not a url\nrules: []\n')).toBe(
      'gateway.yaml:3: upstreams[0].url: "not a url" is not a URL',
    );
  });

  it('a command that is not a list of words', () => {
    expect(errorOf('upstreams:\n  - name: a\n    command: npx server\nrules: []\n')).toBe(
      'gateway.yaml:3: upstreams[0].command: must be a list, not the text "npx server"',
    );
    expect(errorOf('upstreams:\n  - name: a\n    command: []\nrules: []\n')).toBe(
      'gateway.yaml:3: upstreams[0].command: must not be an empty list',
    );
  });

  it('cwd or env on an HTTP upstream', () => {
    expect(errorOf('upstreams:\n  - name: a\n    url: http://x/mcp\n    env: { A: b }\nrules: []\n')).toBe(
      'gateway.yaml:4: upstreams[0].env: only a stdio upstream (command) takes env',
    );
  });

  it('an env value that is not text', () => {
    expect(
      errorOf('upstreams:\n  - name: a\n    command: [x]\n    env:\n      PORT: 8080\nrules: []\n'),
    ).toBe('gateway.yaml:5: upstreams[0].env.PORT: must be text (quote numbers and true/false: "8080")');
  });

  it('credentials on a stdio upstream', () => {
    expect(
      errorOf(
        'upstreams:\n  - name: a\n    command: [x]\n    credentials: { type: static, env: T }\nrules: []\n',
      ),
    ).toBe(
      'gateway.yaml:4: upstreams[0].credentials: only an upstream with a url takes credentials; give a stdio command its secrets in env',
    );
  });

  it('credentials of an unknown type, with a key their type does not take, or both env and file', () => {
    const upstream = (credentials: string) =>
      `upstreams:\n  - name: a\n    url: http://x/mcp\n    credentials: ${credentials}\nrules: []\n`;
    expect(errorOf(upstream('{ type: basic }'))).toBe(
      'gateway.yaml:4: upstreams[0].credentials.type: unknown credentials type "basic" (choose none, static, token-exchange, oauth)',
    );
    expect(errorOf(upstream('{ type: static, env: T, clientId: x }'))).toBe(
      'gateway.yaml:4: upstreams[0].credentials: unknown key "clientId" (choose type, env, file)',
    );
    expect(errorOf(upstream('{ type: static, env: T, file: ./t }'))).toBe(
      'gateway.yaml:4: upstreams[0].credentials: static credentials need exactly one of env (a variable holding the token) or file',
    );
    expect(errorOf(upstream('{ type: token-exchange, clientId: gw }'))).toBe(
      "gateway.yaml:4: upstreams[0].credentials: missing issuer: the URL of the callers' token issuer",
    );
  });

  it('an unknown key in a rule', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    rolse: [dev]\n'))).toBe(
      'gateway.yaml:6: rules[0]: unknown key "rolse" (choose name, tools, prompts, resources, roles, subjects, scopes, reason, rateLimit, require, approval, deny, when, paths, descendingTools)',
    );
  });

  it('an unknown control', () => {
    expect(
      errorOf(
        withRules(
          '  - tools: [files/read_*]\n    roles: ["*"]\n  - tools: [files/write_file]\n    roles: [dev]\n    require: [consnet]\n',
        ),
      ),
    ).toBe('gateway.yaml:9: rules[1].require: unknown control "consnet" (choose consent, step_up, approval)');
  });

  it('a rule without tools, or a tool that is not <upstream>/<glob>, or names no upstream', () => {
    expect(errorOf(withRules('  - roles: [dev]\n'))).toBe(
      'gateway.yaml:5: rules[0]: missing tools: the <upstream>/<tool glob> patterns this rule is about (or prompts, resources)',
    );
    expect(errorOf(withRules('  - tools: [read_file]\n    roles: [dev]\n'))).toBe(
      'gateway.yaml:5: rules[0].tools: "read_file" must be <upstream>/<tool glob>, as files/read_* or tickets/*',
    );
    expect(errorOf(withRules('  - tools: [file/read_file]\n    roles: [dev]\n'))).toBe(
      'gateway.yaml:5: rules[0].tools: "file/read_file" names no upstream "file" (choose files)',
    );
  });

  it('an allow rule that says for whom, with an empty list or not at all', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n'))).toMatch(
      /^gateway\.yaml:5: rules\[0\]: an allow rule must say who it is for \(roles, subjects or scopes\); with none it matches nobody/,
    );
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: []\n'))).toBe(
      'gateway.yaml:6: rules[0].roles: must not be an empty list',
    );
  });

  it('approval required without saying who approves, and an approval not required', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    require: [approval]\n'))).toBe(
      'gateway.yaml:7: rules[0].require: approval is required, so the rule needs approval: { role: ... } saying who approves',
    );
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    approval: { role: lead }\n'))).toBe(
      'gateway.yaml:7: rules[0].approval: is set but require does not list approval; add it to require or remove this',
    );
    expect(
      errorOf(
        withRules(
          '  - tools: [files/*]\n    roles: [dev]\n    require: [approval]\n    approval: { approvals: 2 }\n',
        ),
      ),
    ).toBe('gateway.yaml:8: rules[0].approval: missing role: who approves, as { role: approver }');
  });

  it('a duration that is not one, and a rate limit without its period', () => {
    expect(
      errorOf(
        withRules(
          '  - tools: [files/*]\n    roles: [dev]\n    require: [approval]\n    approval: { role: lead, expiresIn: 1 day }\n',
        ),
      ),
    ).toBe(
      'gateway.yaml:8: rules[0].approval.expiresIn: "1 day" is not a duration (a whole number and a unit: 500ms, 30s, 5m, 1h, 24h, 7d)',
    );
    expect(
      errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    rateLimit: { requests: 10 }\n')),
    ).toBe('gateway.yaml:7: rules[0].rateLimit: missing per: in how long, as { requests: 10, per: 1m }');
    expect(
      errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    rateLimit: { requests: 0, per: 1m }\n')),
    ).toBe(
      'gateway.yaml:7: rules[0].rateLimit.requests: must be a whole number from 1 to 1000000, not number 0',
    );
  });

  it('a deny rule that also requires controls', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    deny: true\n    require: [consent]\n'))).toBe(
      'gateway.yaml:7: rules[0].require: a deny rule refuses the call; it cannot also require controls or set a rate limit',
    );
  });

  it('deny that is not true or false', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    deny: "yes"\n'))).toBe(
      'gateway.yaml:7: rules[0].deny: must be true or false, not the text "yes"',
    );
  });

  it('two rules of one name', () => {
    expect(
      errorOf(
        withRules(
          '  - name: reads\n    tools: [files/*]\n    roles: [dev]\n  - name: reads\n    tools: [files/*]\n    roles: [ops]\n',
        ),
      ),
    ).toBe(
      'gateway.yaml:8: rules[1].name: "reads" is already the name of rules[0]; rule names must be unique',
    );
  });

  it('a condition CEL cannot parse', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    when: "args.path +"\n'))).toMatch(
      /^gateway\.yaml:7: rules\[0\]\.when: syntax error at 1:11: /,
    );
  });

  it('a condition naming a variable, a function or a field that does not exist', () => {
    const when = (expr: string) =>
      errorOf(withRules(`  - tools: [files/*]\n    roles: [dev]\n    when: '${expr}'\n`));
    expect(when('request.path == "/"')).toBe(
      "gateway.yaml:7: rules[0].when: undeclared reference to 'request' (the variables are args, caller, tool)",
    );
    expect(when('args.path.startswith("/")')).toBe(
      "gateway.yaml:7: rules[0].when: undeclared reference to function 'startswith'",
    );
    expect(when('caller.role == "x"')).toBe(
      "gateway.yaml:7: rules[0].when: caller has no field 'role' (it has subject, issuer, roles, scopes)",
    );
    expect(when('caller.subject.startsWith(1)')).toBe(
      "gateway.yaml:7: rules[0].when: found no matching overload for 'startsWith' applied to 'string.(int)'",
    );
  });

  it('a condition that does not give a bool', () => {
    expect(errorOf(withRules('  - tools: [files/*]\n    roles: [dev]\n    when: size(caller.roles)\n'))).toBe(
      'gateway.yaml:7: rules[0].when: a condition must give a bool, and this one gives int',
    );
  });
});

describe('rules on prompts and resources', () => {
  it('reads prompts and resources, each pattern checked like a tool pattern', () => {
    const config = parseGatewayConfig(
      withRules('  - prompts: [files/review]\n    resources: ["files/file:///srv/*"]\n    roles: ["*"]\n'),
      'gateway.yaml',
    );
    expect(config.rules[0]).toMatchObject({ prompts: ['files/review'], resources: ['files/file:///srv/*'] });
    expect(errorOf(withRules('  - prompts: [nowhere/review]\n    roles: ["*"]\n'))).toMatch(
      /^gateway\.yaml:5: rules\[0\]\.prompts: "nowhere\/review" names no upstream "nowhere"/,
    );
  });
});
