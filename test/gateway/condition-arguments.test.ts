// The argument names a rule's condition reads, for `mrtr gateway check`'s warning about names a tool does not have.
import { describe, expect, it } from 'vitest';
import { argumentsRead } from '../../src/gateway/policy/condition-arguments.js';
import { unknownArgumentWarnings } from '../../src/gateway/policy/unknown-arguments.js';

describe('argumentsRead', () => {
  it('finds args.x, args["x"], has(args.x) and "x" in args, also inside macros; not other variables', () => {
    expect(
      argumentsRead(
        'args.pth.startsWith("/") && has(args.mode) || args["dest"] == "x" || "size" in args || ' +
          'args.paths.exists(p, p == caller.subject) || tool.name == "a"',
      ),
    ).toEqual(['pth', 'mode', 'dest', 'size', 'paths']);
  });

  it('reads nothing from a condition that does not parse (the config check reports that one)', () => {
    expect(argumentsRead('args.path.(')).toEqual([]);
  });
});

describe('unknownArgumentWarnings', () => {
  const tools = [
    { upstream: 'files', tool: 'read_file', definition: { inputSchema: { properties: { path: {} } } } },
    { upstream: 'files', tool: 'any', definition: { inputSchema: { type: 'object' } } },
    { upstream: 'mail', tool: 'send', definition: { inputSchema: { properties: { to: {} } } } },
  ];

  it('names the rule, the tool and the argument; only tools the rule covers, only schemas that list properties', () => {
    expect(
      unknownArgumentWarnings(
        [
          { tools: ['files/*'], roles: ['*'], when: 'args.pth == "x"' },
          { name: 'ok', tools: ['files/read_*'], deny: true, when: 'args.path == "x"' },
        ],
        tools,
      ),
    ).toEqual([
      'rules[0]: its condition reads args.pth, but files/read_file has no argument "pth" (it has: path)',
    ]);
  });
});
