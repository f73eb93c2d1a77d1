// The policy engine: deny by default, deny wins, conditions fail closed and name their rule, listing vs calling,
// requirements that add up, a digest that follows meaning and not layout, conditions as CEL reads them.
import { describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../../src/gateway/config.js';
import { compileGlob, globMatches } from '../../src/gateway/policy/glob.js';
import {
  compilePolicy,
  type Decision,
  type PolicyCaller,
  type PolicyRule,
} from '../../src/gateway/policy/index.js';

const ann: PolicyCaller = {
  subject: 'ann',
  issuer: 'https://id.example',
  roles: ['requester'],
  scopes: ['files'],
};
const bob: PolicyCaller = { subject: 'bob', roles: [], scopes: [] };
const files = (tool: string) => ({ upstream: 'files', tool });
const policyOf = (rules: PolicyRule[]) => compilePolicy(rules, { file: 'test.yaml' });
const refused = (d: Decision) => (d.allow ? undefined : d);

describe('decide', () => {
  it('denies by default: no rule for the tool, or none for the caller', () => {
    const policy = policyOf([{ tools: ['files/read_*'], roles: ['requester'] }]);
    expect(policy.decide(ann, files('write_file'), {})).toEqual({
      allow: false,
      reason: 'no_rule',
      message: "The gateway's policy does not allow you to call this tool.",
    });
    expect(policy.decide(bob, files('read_file'), {})).toMatchObject({ allow: false, reason: 'no_rule' });
    expect(policy.decide(ann, files('read_file'), {})).toEqual({
      allow: true,
      rules: ['rule 1'],
      require: [],
      rateLimits: [],
    });
  });

  it('lets a deny rule win over any allow rule, before or after it', () => {
    const allow: PolicyRule = { tools: ['files/*'], roles: ['*'] };
    const deny: PolicyRule = { name: 'no deletes', tools: ['files/delete_*'], roles: ['*'], deny: true };
    for (const rules of [
      [allow, deny],
      [deny, allow],
    ]) {
      expect(policyOf(rules).decide(ann, files('delete_file'), {})).toEqual({
        allow: false,
        rule: 'no deletes',
        reason: 'denied',
        message: "The gateway's policy refuses this call.",
      });
      expect(policyOf(rules).decide(ann, files('read_file'), {}).allow).toBe(true);
    }
  });

  it("shows a refused caller the deny rule's reason and nothing else of the rule", () => {
    const policy = policyOf([
      { tools: ['files/*'], roles: ['*'] },
      { tools: ['files/*'], when: 'args.path.startsWith("/secret")', deny: true, reason: 'secrets stay put' },
    ]);
    const decision = refused(policy.decide(ann, files('read_file'), { path: '/secret/key' }));
    expect(decision?.message).toBe('secrets stay put');
    expect(decision?.message).not.toContain('startsWith');
  });

  it('matches a caller by any role, one of the subjects and all of the scopes', () => {
    const policy = policyOf([
      { name: 'by role', tools: ['files/a'], roles: ['ops', 'requester'] },
      { name: 'by subject', tools: ['files/b'], subjects: ['bob'] },
      { name: 'by scopes', tools: ['files/c'], scopes: ['files', 'admin'] },
      { name: 'role and scope', tools: ['files/d'], roles: ['requester'], scopes: ['files'] },
    ]);
    expect(policy.decide(ann, files('a'), {}).allow).toBe(true);
    expect(policy.decide(ann, files('b'), {}).allow).toBe(false);
    expect(policy.decide(bob, files('b'), {}).allow).toBe(true);
    expect(policy.decide(ann, files('c'), {}).allow).toBe(false);
    expect(policy.decide({ ...ann, scopes: ['admin', 'files'] }, files('c'), {}).allow).toBe(true);
    expect(policy.decide(ann, files('d'), {}).allow).toBe(true);
    expect(policy.decide({ ...ann, scopes: [] }, files('d'), {}).allow).toBe(false);
  });

  it('applies a deny rule that names no one to everyone', () => {
    const policy = policyOf([
      { tools: ['files/*'], roles: ['*'] },
      { name: 'frozen', tools: ['files/write_*'], deny: true },
    ]);
    expect(policy.decide(bob, files('write_file'), {})).toMatchObject({ allow: false, rule: 'frozen' });
  });
});

describe('conditions fail closed', () => {
  const secretDeny: PolicyRule = {
    name: 'secret',
    tools: ['files/*'],
    when: 'args.path.startsWith("/srv/secret")',
    deny: true,
  };

  it("denies when a deny rule's condition cannot be evaluated, naming the rule and why", () => {
    const policy = policyOf([{ tools: ['files/*'], roles: ['*'] }, secretDeny]);
    expect(policy.decide(ann, files('list_directory'), {})).toEqual({
      allow: false,
      rule: 'secret',
      reason: 'condition_error',
      detail: 'rule "secret": when: field not found: path',
      message: "The gateway's policy could not decide on this call, so it refuses it.",
    });
    expect(refused(policy.decide(ann, files('read_file'), { path: 42 }))?.detail).toBe(
      "rule \"secret\": when: found no matching overload for 'startsWith' applied to 'int.(string)'",
    );
    expect(policy.decide(ann, files('read_file'), { path: '/srv/public/a' }).allow).toBe(true);
  });

  it('does not let an allow rule allow when its condition cannot be evaluated', () => {
    const small: PolicyRule = {
      name: 'small reads',
      tools: ['files/read_file'],
      roles: ['*'],
      when: 'args.limit < 100',
    };
    expect(policyOf([small]).decide(ann, files('read_file'), {})).toMatchObject({
      allow: false,
      rule: 'small reads',
      reason: 'condition_error',
      detail: 'rule "small reads": when: field not found: limit',
    });
    // Another allow rule that does match still allows: the failed condition only withholds its own rule.
    const policy = policyOf([small, { name: 'requesters', tools: ['files/*'], roles: ['requester'] }]);
    expect(policy.decide(ann, files('read_file'), {})).toMatchObject({ allow: true, rules: ['requesters'] });
  });

  it('takes a value that is not a bool as a condition error', () => {
    const policy = policyOf([{ name: 'flag', tools: ['files/*'], roles: ['*'], when: 'args.confirmed' }]);
    expect(policy.decide(ann, files('x'), { confirmed: true }).allow).toBe(true);
    expect(policy.decide(ann, files('x'), { confirmed: false })).toMatchObject({
      allow: false,
      reason: 'no_rule',
    });
    expect(policy.decide(ann, files('x'), { confirmed: 'yes' })).toMatchObject({
      allow: false,
      reason: 'condition_error',
      detail: 'rule "flag": when: gave a string, not a bool',
    });
  });

  it('refuses arguments nested too deep to read, for every rule with a condition', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { inner: deep };
    const policy = policyOf([{ name: 'cond', tools: ['files/*'], roles: ['*'], when: 'has(args.path)' }]);
    expect(policy.decide(ann, files('x'), { deep, path: '/a' })).toMatchObject({
      allow: false,
      reason: 'condition_error',
      detail: 'rule "cond": when: arguments nested deeper than 64',
    });
  });
});

describe('conditions read as written', () => {
  const allowWhen = (when: string) => policyOf([{ tools: ['files/*'], roles: ['*'], when }]);

  it('compares JSON numbers with CEL ints and doubles', () => {
    expect(allowWhen('args.count > 5').decide(ann, files('x'), { count: 7 }).allow).toBe(true);
    expect(allowWhen('args.count > 5').decide(ann, files('x'), { count: 3 }).allow).toBe(false);
    expect(allowWhen('args.count > 5').decide(ann, files('x'), { count: 5.5 }).allow).toBe(true);
    expect(allowWhen('args.count == 5').decide(ann, files('x'), { count: 5 }).allow).toBe(true);
    expect(allowWhen('args.count % 2 == 0').decide(ann, files('x'), { count: 8 }).allow).toBe(true);
    expect(allowWhen('args.ratio <= 0.5').decide(ann, files('x'), { ratio: 0.25 }).allow).toBe(true);
    expect(
      allowWhen('args.items.all(i, i.qty < 10)').decide(ann, files('x'), { items: [{ qty: 1 }, { qty: 9 }] })
        .allow,
    ).toBe(true);
  });

  it('reads the caller and the tool', () => {
    const caller = '"requester" in caller.roles && caller.subject == "ann" && "files" in caller.scopes';
    expect(allowWhen(caller).decide(ann, files('x'), {}).allow).toBe(true);
    expect(allowWhen(caller).decide(bob, files('x'), {}).allow).toBe(false);
    expect(
      allowWhen('has(caller.issuer) && caller.issuer == "https://id.example"').decide(ann, files('x'), {})
        .allow,
    ).toBe(true);
    expect(allowWhen('has(caller.issuer)').decide(bob, files('x'), {}).allow).toBe(false);
    const tool = 'tool.upstream == "files" && tool.name.startsWith("read_")';
    expect(allowWhen(tool).decide(ann, files('read_file'), {}).allow).toBe(true);
    expect(allowWhen(tool).decide(ann, files('write_file'), {}).allow).toBe(false);
  });

  it('has the strings extension', () => {
    expect(
      allowWhen('args.name.lowerAscii() == "readme"').decide(ann, files('x'), { name: 'README' }).allow,
    ).toBe(true);
  });

  it('takes argument names such as constructor as plain keys', () => {
    const policy = allowWhen('!has(args.constructor) && !has(args.toString)');
    expect(policy.decide(ann, files('x'), {}).allow).toBe(true);
    expect(policy.decide(ann, files('x'), JSON.parse('{"constructor": 1}')).allow).toBe(false);
  });

  it('matches with RE2: a catastrophic pattern against a long hostile argument still returns an answer', () => {
    const policy = allowWhen('args.name.matches("^(a+)+$")');
    const hostile = `${'a'.repeat(50_000)}!`;
    expect(policy.decide(ann, files('x'), { name: hostile }).allow).toBe(false);
    expect(policy.decide(ann, files('x'), { name: 'aaaa' }).allow).toBe(true);
    // The pattern from the caller: RE2 compiles and runs it in linear time as well.
    const theirs = allowWhen('args.name.matches(args.pattern)');
    expect(
      typeof theirs.decide(ann, files('x'), { name: hostile, pattern: '(a|aa)*(a|aa)*(a|aa)*$b' }).allow,
    ).toBe('boolean');
  });
});

describe('visible', () => {
  const policy = policyOf([
    { tools: ['files/*'], roles: ['requester'] },
    { tools: ['files/read_*'], roles: ['*'], when: 'args.size < 10' },
    { tools: ['files/delete_file'], roles: ['*'], deny: true },
    { tools: ['files/read_file', 'files/write_file'], when: 'args.path.startsWith("/secret")', deny: true },
  ]);

  it('lists a tool an allow rule matches, its condition aside', () => {
    expect(policy.visible(bob, files('read_file'))).toBe(true);
    expect(policy.decide(bob, files('read_file'), { size: 100 }).allow).toBe(false);
  });

  it('keeps a tool listed under a conditional deny; decide judges each call', () => {
    expect(policy.visible(ann, files('write_file'))).toBe(true);
    expect(policy.decide(ann, files('write_file'), { path: '/secret/a' }).allow).toBe(false);
    expect(policy.decide(ann, files('write_file'), { path: '/public/a' }).allow).toBe(true);
  });

  it('hides a tool an unconditional deny matches, and one no allow rule matches', () => {
    expect(policy.visible(ann, files('delete_file'))).toBe(false);
    expect(policy.visible(bob, files('write_file'))).toBe(false);
    expect(policy.visible(ann, { upstream: 'tickets', tool: 'read_ticket' })).toBe(false);
  });
});

describe('several allow rules add up', () => {
  it('requires every control any of them requires, the strictest approval and every rate limit', () => {
    const policy = policyOf([
      {
        name: 'consent',
        tools: ['files/*'],
        roles: ['*'],
        require: ['consent'],
        rateLimit: { requests: 10, perMs: 60_000 },
      },
      {
        name: 'two leads',
        tools: ['files/move_*'],
        roles: ['requester'],
        require: ['approval', 'step_up'],
        approval: { role: 'lead', approvals: 2, expiresInMs: 86_400_000 },
      },
      {
        name: 'one approver, soon',
        tools: ['files/move_file'],
        roles: ['requester'],
        require: ['approval'],
        approval: { role: 'approver', approvals: 1, expiresInMs: 3_600_000 },
        rateLimit: { requests: 1, perMs: 1000 },
      },
    ]);
    expect(policy.decide(ann, files('move_file'), {})).toEqual({
      allow: true,
      rules: ['consent', 'two leads', 'one approver, soon'],
      require: ['consent', 'step_up', 'approval'],
      approval: { role: 'lead', approvals: 2, expiresInMs: 3_600_000 },
      rateLimits: [
        { rule: 'consent', bucket: expect.any(String), requests: 10, perMs: 60_000 },
        { rule: 'one approver, soon', bucket: expect.any(String), requests: 1, perMs: 1000 },
      ],
    });
    expect(policy.controlsUsed()).toEqual(['consent', 'step_up', 'approval']);
  });

  it('names a rate limit bucket by what its rule means: moved lines keep it, a changed limit starts another', () => {
    const bucketOf = (text: string) => {
      const decision = parseGatewayConfig(text, 'gateway.yaml').policy.decide(
        { subject: 'alice', roles: ['r'], scopes: [] },
        { upstream: 'files', tool: 'read' },
        {},
      );
      return decision.allow ? decision.rateLimits[0]?.bucket : undefined;
    };
    const config = (preamble: string, requests: number) =>
      `${preamble}upstreams:\n  - name: files\n    url: http://127.0.0.1:1/mcp\nrules:\n  - tools: ["files/*"]\n    roles: [r]\n    rateLimit: { requests: ${requests}, per: 1m }\n`;
    const before = bucketOf(config('', 5));
    expect(before).toEqual(expect.any(String));
    expect(bucketOf(config('# a comment that moves every line\n\n', 5))).toBe(before);
    expect(bucketOf(config('', 6))).not.toBe(before);
  });

  it("takes the first rule's approval role when two ask for as many approvers", () => {
    const approval = (role: string): PolicyRule => ({
      name: role,
      tools: ['files/*'],
      roles: ['*'],
      require: ['approval'],
      approval: { role },
    });
    const decision = policyOf([approval('first'), approval('second')]).decide(ann, files('x'), {});
    expect(decision).toMatchObject({
      allow: true,
      approval: { role: 'first', approvals: 1, expiresInMs: 86_400_000 },
    });
  });
});

describe('the digest', () => {
  const config = `# the gateway
upstreams:
  - name: files
    command: [server, /srv]
rules:
  - tools: [files/read_*, files/list_*]
    roles: [dev, ops]
    when: has(args.path) && args.path.startsWith("/srv")
  - tools: [files/write_file]
    roles: [dev]
    require: [consent, step_up]
`;
  const digestOf = (text: string) => parseGatewayConfig(text, 'gateway.yaml').policy.digest;

  it('is SHA-256 in base64url', () => {
    expect(digestOf(config)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('does not change with comments, layout, key order, set order, quoting or the spelling step-up', () => {
    const relaid = `upstreams: [{ name: files, command: [server, /srv] }]   # one upstream


rules:
  # reads
  - roles: ["ops", "dev"]
    when: 'has(args.path)   &&   args.path.startsWith("/srv")'
    tools: ["files/list_*", "files/read_*"]
  - { tools: [files/write_file], roles: [dev], require: [step-up, consent] }
`;
    expect(digestOf(relaid)).toBe(digestOf(config));
  });

  it('changes when what a rule does changes', () => {
    const base = digestOf(config);
    expect(digestOf(config.replace('roles: [dev, ops]', 'roles: [dev]'))).not.toBe(base);
    expect(digestOf(config.replace('"/srv"', '"/srv/share"'))).not.toBe(base);
    expect(digestOf(config.replace('require: [consent, step_up]', 'require: [consent]'))).not.toBe(base);
    expect(
      digestOf(
        config.replace('  - tools: [files/write_file]', '  - name: writes\n    tools: [files/write_file]'),
      ),
    ).not.toBe(base);
    expect(digestOf(`${config}  - tools: [files/*]\n    deny: true\n`)).not.toBe(base);
  });
});

describe('tool globs', () => {
  it('match * within a part and ? as one character', () => {
    expect(globMatches('read_*', 'read_file')).toBe(true);
    expect(globMatches('read_*', 'write_file')).toBe(false);
    expect(globMatches('*_file', 'read_file')).toBe(true);
    expect(globMatches('read_?ile', 'read_file')).toBe(true);
    expect(globMatches('read_?ile', 'read_fffile')).toBe(false);
    expect(globMatches('a*b*c', 'axxbyyc')).toBe(true);
    expect(globMatches('a*b*c', 'axxbyy')).toBe(false);
    expect(compileGlob('read_file')('read_file')).toBe(true);
    expect(compileGlob('read.file')('readXfile')).toBe(false);
  });

  it('never let * reach across the upstream boundary', () => {
    const policy = policyOf([{ tools: ['file*/read'], roles: ['*'] }]);
    expect(policy.decide(ann, { upstream: 'files', tool: 'read' }, {}).allow).toBe(true);
    // The tool part must match on its own: "file*" does not swallow "s/x" of files/x/read.
    expect(policy.decide(ann, { upstream: 'files', tool: 'x/read' }, {}).allow).toBe(false);
    const star = policyOf([{ tools: ['*/read_*'], roles: ['*'] }]);
    expect(star.decide(ann, { upstream: 'tickets', tool: 'read_ticket' }, {}).allow).toBe(true);
    expect(star.decide(ann, { upstream: 'tickets', tool: 'write_ticket' }, {}).allow).toBe(false);
  });

  it('answer a pathological glob without backtracking blow-up', () => {
    expect(globMatches('*a*a*a*a*a*a*a*a*b', 'a'.repeat(10_000))).toBe(false);
  });
});

describe('compilePolicy from a program', () => {
  it('refuses what cannot work, naming the rule at line 1 when no lines are known', () => {
    expect(() => policyOf([{ tools: ['files/*'], roles: ['*'], when: 'args.x +' }])).toThrow(
      /^test\.yaml:1: rules\[0\]\.when: syntax error/,
    );
    expect(() => policyOf([{ tools: ['files/*'], roles: ['*'], require: ['consnet' as 'consent'] }])).toThrow(
      'test.yaml:1: rules[0].require: unknown control "consnet" (choose consent, step_up, approval)',
    );
    expect(() => policyOf([{ tools: ['files'], roles: ['*'] }])).toThrow(
      'test.yaml:1: rules[0].tools: "files" must be <upstream>/<tool glob>, as files/read_* or tickets/*',
    );
  });

  it('uses the lines it is given', () => {
    expect(() =>
      compilePolicy([{ tools: ['files/*'], roles: ['*'], when: 'nope' }], {
        file: 'g.yaml',
        lineOf: (i, key) => (key === 'when' ? 40 + i : 30),
      }),
    ).toThrow(
      "g.yaml:40: rules[0].when: undeclared reference to 'nope' (the variables are args, caller, tool)",
    );
  });

  it('counts its rules', () => {
    expect(policyOf([]).ruleCount).toBe(0);
    expect(policyOf([]).decide(ann, files('x'), {}).allow).toBe(false);
  });
});

describe('prompts and resources', () => {
  const prompt = (name: string) => ({ kind: 'prompt' as const, upstream: 'docs', name });
  const resource = (name: string) => ({ kind: 'resource' as const, upstream: 'docs', name });

  it('denies by default and lets a deny win, as for tools', () => {
    const policy = policyOf([
      { name: 'handbook', prompts: ['docs/review_*'], resources: ['docs/file:///handbook/*'], roles: ['*'] },
      { name: 'secrets', resources: ['docs/file:///handbook/secret*'], deny: true },
    ]);
    expect(policy.allows(ann, prompt('review_pr'))).toEqual({ allow: true, rules: ['handbook'] });
    expect(policy.allows(ann, prompt('plan'))).toEqual({ allow: false, reason: 'no_rule' });
    // `*` reaches across `/` in a URI, and a template is named by its URI template.
    expect(policy.allows(ann, resource('file:///handbook/a/b.md')).allow).toBe(true);
    expect(policy.allows(ann, resource('file:///handbook/{page}.md')).allow).toBe(true);
    expect(policy.allows(ann, resource('file:///handbook/secret.md'))).toEqual({
      allow: false,
      rule: 'secrets',
      reason: 'denied',
    });
    // A rule's prompts are not its tools, nor the other way round.
    expect(policy.decide(ann, files('review_pr'), {}).allow).toBe(false);
    expect(policyOf([{ tools: ['docs/*'], roles: ['*'] }]).allows(ann, prompt('review_pr')).allow).toBe(
      false,
    );
  });

  it('offers a kind only when some allow rule names it', () => {
    const policy = policyOf([
      { tools: ['docs/*'], roles: ['*'] },
      { resources: ['docs/*'], deny: true },
    ]);
    expect(policy.covers('prompt')).toBe(false);
    expect(policy.covers('resource')).toBe(false);
    expect(policyOf([{ prompts: ['docs/*'], roles: ['*'] }]).covers('prompt')).toBe(true);
  });

  it("refuses a tool call's keys on a rule naming prompts or resources, and a rule naming nothing", () => {
    expect(() => policyOf([{ prompts: ['docs/*'], roles: ['*'], require: ['consent'] }])).toThrow(
      'test.yaml:1: rules[0].require: is for tool calls; a rule naming prompts or resources cannot have it (put them in a rule of their own)',
    );
    expect(() =>
      policyOf([{ resources: ['docs/*'], roles: ['*'], when: 'caller.subject == "ann"' }]),
    ).toThrow(/rules\[0\]\.when: is for tool calls/);
    expect(() => policyOf([{ roles: ['*'] }])).toThrow(
      'test.yaml:1: rules[0]: names nothing: give tools, prompts or resources as <upstream>/<glob>',
    );
    expect(() => policyOf([{ prompts: ['docs'], roles: ['*'] }])).toThrow(
      'test.yaml:1: rules[0].prompts: "docs" must be <upstream>/<glob>, as docs/review_*',
    );
  });

  it('keeps the version of a policy that names none of them', () => {
    const rules: PolicyRule[] = [{ tools: ['files/*'], roles: ['*'] }];
    const withPrompts: PolicyRule[] = [{ tools: ['files/*'], prompts: ['files/*'], roles: ['*'] }];
    expect(policyOf(rules).digest).toBe(
      policyOf([{ tools: ['files/*'], roles: ['*'], prompts: undefined }]).digest,
    );
    expect(policyOf(withPrompts).digest).not.toBe(policyOf(rules).digest);
  });
});

describe('screen', () => {
  const policy = policyOf([
    { tools: ['files/*'], roles: ['requester'] },
    { tools: ['files/read_*'], roles: ['*'], when: 'args.size < 10' },
    { tools: ['files/delete_file'], roles: ['*'], deny: true },
  ]);

  it('says what visible says, and decides on its matched rules what decide decides', () => {
    for (const who of [ann, bob])
      for (const tool of ['read_file', 'write_file', 'delete_file']) {
        const screening = policy.screen(who, files(tool));
        expect(screening.visible).toBe(policy.visible(who, files(tool)));
        for (const args of [{ size: 1 }, { size: 100 }])
          expect(policy.decide(who, files(tool), args, screening)).toEqual(
            policy.decide(who, files(tool), args),
          );
      }
  });

  it("is never used for another caller, another tool or another policy's call", () => {
    const other = policyOf([{ tools: ['files/*'], roles: ['*'] }]);
    // ann may write; bob, judged with ann's screening, still may not; nor may a tool screened for another.
    const annWrites = policy.screen(ann, files('write_file'));
    expect(policy.decide(bob, files('write_file'), {}, annWrites).allow).toBe(false);
    expect(policy.decide(ann, files('delete_file'), {}, annWrites).allow).toBe(false);
    expect(policy.decide({ ...ann, roles: [] }, files('write_file'), {}, annWrites).allow).toBe(false);
    // A screening of the old policy (a reload came between) is not this one's.
    expect(policy.decide(bob, files('write_file'), {}, other.screen(bob, files('write_file'))).allow).toBe(
      false,
    );
  });
});
