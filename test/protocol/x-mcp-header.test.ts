// The x-mcp-header rule (streamable-http.mdx "Custom Headers from Tool Parameters"): which annotations are valid,
// how values become Mcp-Param-* headers, and how the server compares them. The server refuses at registration
// exactly the tools the client's plan rejects, and a server-registered tool is callable by our client over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planToolHeaders as clientPlanToolHeaders, McpClient } from '../../src/client/index.js';
import {
  argumentAt,
  type JsonObject,
  MrtrError,
  paramHeaderMatches,
  paramHeaders,
  paramHeaderText,
  parseHeaderInteger,
  planToolHeaders,
} from '../../src/protocol/index.js';
import { type HttpEndpoint, McpServer, text } from '../../src/server/index.js';
import { mcp } from '../helpers/mcp-http.js';

const quiet = { info() {}, warn() {}, error() {} };
const object = (properties: JsonObject, extra: JsonObject = {}): JsonObject => ({
  type: 'object',
  properties,
  ...extra,
});
const str = (header: unknown, extra: JsonObject = {}): JsonObject => ({
  type: 'string',
  'x-mcp-header': header,
  ...extra,
});

const VALID: Array<[string, JsonObject, Array<{ header: string; path: string[] }>]> = [
  [
    'string, integer and boolean properties',
    object({
      region: str('Region'),
      n: { type: 'integer', 'x-mcp-header': 'N' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
    }),
    [
      { header: 'Region', path: ['region'] },
      { header: 'N', path: ['n'] },
      { header: 'Dry', path: ['dry'] },
    ],
  ],
  [
    'a nested property reached through properties only',
    object({ opts: object({ deep: object({ id: { type: 'integer', 'x-mcp-header': 'Deep-Id' } }) }) }),
    [{ header: 'Deep-Id', path: ['opts', 'deep', 'id'] }],
  ],
  [
    'every tchar, and a name equal to a standard header',
    object({ a: str("!#$%&'*+-.^_`|~09azAZ"), b: str('Method') }),
    [
      { header: "!#$%&'*+-.^_`|~09azAZ", path: ['a'] },
      { header: 'Method', path: ['b'] },
    ],
  ],
  [
    'the key "x-mcp-header" as a property name, and inside data keywords',
    object({
      'x-mcp-header': { type: 'string' },
      a: {
        type: 'string',
        default: { 'x-mcp-header': 'D' },
        enum: [{ 'x-mcp-header': 'E' }],
        const: { 'x-mcp-header': 'C' },
        examples: [{ 'x-mcp-header': 'X' }],
      },
    }),
    [],
  ],
  [
    'properties named __proto__, constructor and prototype',
    JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string","x-mcp-header":"P"},' +
        '"constructor":{"type":"string","x-mcp-header":"C"},"prototype":{"type":"boolean","x-mcp-header":"Q"}}}',
    ),
    [
      { header: 'P', path: ['__proto__'] },
      { header: 'C', path: ['constructor'] },
      { header: 'Q', path: ['prototype'] },
    ],
  ],
  ['no annotation at all', object({ a: { type: 'string' } }, { $defs: { d: { type: 'number' } } }), []],
];

const INVALID: Array<[string, JsonObject, RegExp]> = [
  // The value: a non-empty HTTP token.
  ['an empty name', object({ a: str('') }), /must be a non-empty HTTP token/],
  ['a non-string name', object({ a: str(42) }), /must be a non-empty HTTP token .*, got 42$/],
  ['a space', object({ a: str('My Region') }), /HTTP token/],
  ['a colon', object({ a: str('Region:Primary') }), /HTTP token/],
  ['non-ASCII', object({ a: str('Région') }), /HTTP token/],
  ['a tab', object({ a: str('Region\t1') }), /HTTP token/],
  ['CR LF', object({ a: str('A\r\nX-Injected: 1') }), /HTTP token/],
  // The type: exactly string, integer or boolean.
  [
    'type number',
    object({ a: { type: 'number', 'x-mcp-header': 'A' } }),
    /needs type string, integer or boolean/,
  ],
  ['type object', object({ a: { type: 'object', 'x-mcp-header': 'A' } }), /needs type string/],
  ['type array', object({ a: { type: 'array', items: {}, 'x-mcp-header': 'A' } }), /needs type string/],
  ['type null', object({ a: { type: 'null', 'x-mcp-header': 'A' } }), /needs type string/],
  ['no type', object({ a: { enum: ['x'], 'x-mcp-header': 'A' } }), /got no type/],
  ['a type list', object({ a: { type: ['string', 'null'], 'x-mcp-header': 'A' } }), /needs type string/],
  // Uniqueness, ignoring case.
  ['a duplicate', object({ a: str('Region'), b: str('Region') }), /used twice/],
  ['a duplicate in another case', object({ a: str('MyField'), b: str('myfield') }), /used twice/],
  ['a duplicate at another depth', object({ a: str('X'), o: object({ b: str('x') }) }), /used twice/],
  // Position: statically reachable through properties only.
  ['the root itself', { type: 'object', 'x-mcp-header': 'Root' }, /at \/ is not on a property/],
  ['under items', object({ a: { type: 'array', items: str('A') } }), /\/properties\/a\/items is not/],
  ['under prefixItems', object({ a: { type: 'array', prefixItems: [str('A')] } }), /prefixItems\/0 is not/],
  ['under anyOf', object({ a: { anyOf: [str('A'), { type: 'null' }] } }), /anyOf\/0 is not/],
  ['under oneOf', object({ a: { oneOf: [str('A')] } }), /oneOf\/0 is not/],
  ['under allOf', object({ a: { allOf: [str('A')] } }), /allOf\/0 is not/],
  ['under not', object({ a: { type: 'string', not: str('A') } }), /not is not/],
  // biome-ignore lint/suspicious/noThenProperty: `then` here is the JSON Schema keyword, never awaited.
  ['under if/then/else', object({ a: { if: str('I'), then: str('T'), else: str('E') } }), /\/if is not/],
  ['in $defs (a $ref target)', object({ a: { $ref: '#/$defs/r' } }, { $defs: { r: str('R') } }), /\$defs\/r/],
  ['under a root anyOf', { type: 'object', anyOf: [object({ a: str('A') })] }, /anyOf\/0\/properties\/a is/],
  ['under patternProperties', { type: 'object', patternProperties: { '^a': str('A') } }, /patternProperties/],
  ['under additionalProperties', { type: 'object', additionalProperties: str('A') }, /additionalProperties/],
  [
    'under dependentSchemas',
    { type: 'object', dependentSchemas: { a: object({ b: str('B') }) } },
    /dependent/,
  ],
  ['inside an unknown keyword', object({ a: { type: 'string', 'x-ui': str('A') } }), /x-ui is not/],
  ['a valid one next to an invalid one', object({ ok: str('Ok'), bad: { items: str('B') } }), /bad\/items/],
];

describe('planToolHeaders', () => {
  it('is the one function the client uses', () => {
    expect(clientPlanToolHeaders).toBe(planToolHeaders);
  });

  it.each(VALID)('accepts %s', (_name, schema, bindings) => {
    expect(planToolHeaders(schema)).toEqual({ ok: true, bindings });
  });

  it.each(INVALID)('rejects %s', (_name, schema, reason) => {
    const plan = planToolHeaders(schema);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.reason).toMatch(reason);
  });

  it('names every problem of a tool, not only the first', () => {
    const plan = planToolHeaders(object({ a: str(''), b: { type: 'number', 'x-mcp-header': 'B' } }));
    expect(plan.ok ? [] : plan.problems).toHaveLength(2);
  });

  it('refuses a schema nested deeper than it walks, without overflowing the stack', () => {
    let schema: JsonObject = str('Deep');
    for (let i = 0; i < 200; i++) schema = { allOf: [schema] };
    const plan = planToolHeaders(object({ a: schema }));
    expect(plan.ok ? '' : plan.reason).toMatch(/nested more than 64 levels/);
  });
});

describe('server registration agrees with the client', () => {
  const register = (input: JsonObject) =>
    new McpServer({ name: 'x', version: '1', logger: quiet }).tool(
      { name: 't', description: 'd', input },
      () => text(''),
    );

  it.each(INVALID)('refuses a tool with %s', (_name, schema, reason) => {
    expect(() => register(schema)).toThrow(reason);
    expect(() => register(schema)).toThrow(/^tool t: /);
  });

  it.each(VALID)('registers a tool with %s', (_name, schema) => {
    expect(() => register(schema)).not.toThrow();
  });
});

describe('header values (client side)', () => {
  const bindings = [
    { header: 'Text', path: ['text'] },
    { header: 'N', path: ['n'] },
    { header: 'Flag', path: ['flag'] },
  ];
  it.each<[string, unknown, string]>([
    // streamable-http.mdx "Value Encoding" and SEP-2243's edge-case table.
    ['plain ASCII', 'us-west1', 'us-west1'],
    ['internal spaces', 'us west 1', 'us west 1'],
    ['non-ASCII', 'Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    ['leading and trailing spaces', ' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['a newline', 'line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['CR LF', 'line1\r\nline2', '=?base64?bGluZTENCmxpbmUy?='],
    ['a leading tab', '\tindented', '=?base64?CWluZGVudGVk?='],
    ['the sentinel pattern', '=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
    ['an empty string', '', ''],
  ])('a string with %s', (_name, value, header) => {
    expect(paramHeaders(bindings, { text: value })).toEqual({ 'mcp-param-text': header });
  });

  it('writes integers in decimal and booleans in lower case', () => {
    expect(paramHeaders(bindings, { n: 42, flag: true })).toEqual({
      'mcp-param-n': '42',
      'mcp-param-flag': 'true',
    });
    expect(paramHeaders(bindings, { n: -7, flag: false })).toEqual({
      'mcp-param-n': '-7',
      'mcp-param-flag': 'false',
    });
    expect(paramHeaderText(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(paramHeaderText(-0)).toBe('0');
  });

  it('omits the header for null and absent values', () => {
    expect(paramHeaders(bindings, { text: null, n: undefined })).toEqual({});
    expect(paramHeaders(bindings, {})).toEqual({});
    expect(paramHeaders(bindings, undefined)).toEqual({});
  });

  it.each<[string, unknown, RegExp]>([
    ['2^53', 2 ** 53, /9007199254740992 is not an integer within/],
    ['a fraction', 1.5, /1\.5 is not an integer/],
    ['NaN', Number.NaN, /NaN is not an integer/],
    ['Infinity', Number.POSITIVE_INFINITY, /Infinity is not an integer/],
    ['an object', { a: 1 }, /an? object cannot be sent/],
    ['an array', ['x'], /an? array cannot be sent/],
  ])('refuses %s, naming the argument and the header', (_name, n, message) => {
    expect(() => paramHeaders(bindings, { n })).toThrow(MrtrError);
    expect(() => paramHeaders(bindings, { n })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
    );
    expect(() => paramHeaders(bindings, { n })).toThrow(/^argument n cannot be sent in Mcp-Param-N: /);
    expect(() => paramHeaders(bindings, { n })).toThrow(message);
  });

  it('reads only keys the arguments hold: __proto__, constructor and prototype are plain keys', () => {
    const b = [
      { header: 'P', path: ['__proto__'] },
      { header: 'C', path: ['constructor'] },
      { header: 'Q', path: ['prototype'] },
      { header: 'S', path: ['o', 'toString'] },
    ];
    // Absent: not Object.prototype, not the Object function, not an inherited method.
    expect(paramHeaders(b, { o: {} })).toEqual({});
    expect(argumentAt({}, ['constructor'])).toBeUndefined();
    const args = JSON.parse('{"__proto__":"p","constructor":"c","prototype":true,"o":{"toString":"s"}}');
    expect(paramHeaders(b, args)).toEqual({
      'mcp-param-p': 'p',
      'mcp-param-c': 'c',
      'mcp-param-q': 'true',
      'mcp-param-s': 's',
    });
  });
});

describe('integer comparison (server side)', () => {
  it.each<[string, number]>([
    ['16', 16],
    ['0', 0],
    ['-7', -7],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['-9007199254740991', Number.MIN_SAFE_INTEGER],
    // streamable-http.mdx "Server Validation": integers compare numerically, "42.0 and 42 are considered equal".
    ['42.0', 42],
    ['16.000', 16],
  ])('accepts %s', (header, value) => {
    expect(parseHeaderInteger(header)).toBe(value);
    expect(paramHeaderMatches(header, value)).toBe(true);
  });

  it.each([
    '0x10',
    '0o20',
    '0b10000',
    '16.000000000000001',
    '16.5',
    '1.6e1',
    '1e21',
    '+16',
    '016',
    ' 16',
    '16 ',
    '-0',
    '',
    '.0',
    '16.',
    'Infinity',
    '9007199254740992',
    '12345678901234567',
  ])('refuses %j as the integer 16 or any other', (header) => {
    expect(parseHeaderInteger(header)).toBeUndefined();
    expect(paramHeaderMatches(header, 16)).toBe(false);
  });

  it('never matches a body integer outside the safe range, even digit for digit', () => {
    expect(paramHeaderMatches('9007199254740992', 2 ** 53)).toBe(false);
    // 2^53 + 1 rounds to 2^53 through Number(): the old comparison called these equal.
    expect(paramHeaderMatches('9007199254740993', 2 ** 53)).toBe(false);
  });

  it('compares strings exactly, booleans as true/false, and matches nothing for other body values', () => {
    expect(paramHeaderMatches('us-west1', 'us-west1')).toBe(true);
    expect(paramHeaderMatches('us-west1 ', 'us-west1')).toBe(false);
    expect(paramHeaderMatches('16', '16')).toBe(true);
    expect(paramHeaderMatches('true', true)).toBe(true);
    expect(paramHeaderMatches('True', true)).toBe(false);
    expect(paramHeaderMatches('1', true)).toBe(false);
    expect(paramHeaderMatches('false', false)).toBe(true);
    expect(paramHeaderMatches('{}', {})).toBe(false);
    expect(paramHeaderMatches('', null)).toBe(false);
  });
});

describe('over HTTP', () => {
  let endpoint: HttpEndpoint;
  const input = object({
    region: str('Region'),
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    opts: object({ dry: { type: 'boolean', 'x-mcp-header': 'Dry' } }),
  });
  beforeAll(async () => {
    const server = new McpServer({ name: 'headers', version: '1', logger: quiet }).tool(
      { name: 'mirror', description: 'Mirrors three arguments into headers', input },
      (args) => text(JSON.stringify(args)),
    );
    endpoint = await server.listen({ port: 0 });
  });
  afterAll(() => endpoint.close());

  it('a tool the server registered is listed and callable by a conforming client', async () => {
    const client = new McpClient({ server: endpoint.url });
    try {
      expect((await client.listTools()).map((t) => t.name)).toEqual(['mirror']);
      expect(client.rejectedTools).toEqual([]);
      const args = { region: 'Hello, 世界', count: -9007199254740991, opts: { dry: false } };
      const outcome = await client.callTool('mirror', args);
      expect(outcome.status).toBe('complete');
      if (outcome.status === 'complete')
        expect(outcome.result.content).toEqual([{ type: 'text', text: JSON.stringify(args) }]);
      await expect(client.callTool('mirror', { count: 2 ** 53 })).rejects.toThrow(
        /argument count cannot be sent in Mcp-Param-Count/,
      );
    } finally {
      await client.close();
    }
  });

  const call = (count: number, header: string) =>
    mcp(
      endpoint.url,
      'tools/call',
      { name: 'mirror', arguments: { count } },
      { headers: { 'mcp-param-count': header } },
    );

  it.each(['16', '16.0', '=?base64?MTY=?='])('accepts Mcp-Param-Count: %s for 16', async (header) => {
    const reply = await call(16, header);
    expect(reply.response.result?.content).toEqual([{ type: 'text', text: '{"count":16}' }]);
  });

  it.each(['0x10', '0o20', '0b10000', '16.000000000000001', '1.6e1', '+16', '016'])(
    'refuses Mcp-Param-Count: %s for 16 with 400 and -32020',
    async (header) => {
      const reply = await call(16, header);
      expect(reply.status).toBe(400);
      expect(reply.response.error).toMatchObject({
        code: -32020,
        message: expect.stringContaining('Mcp-Param-Count header value does not match count'),
      });
    },
  );

  it('refuses a body integer beyond 2^53 whatever the header says', async () => {
    const reply = await call(2 ** 53 + 2, '9007199254740994');
    expect(reply.response.error?.code).toBe(-32020);
  });

  it('does not take an absent argument named like an Object member for a present one', async () => {
    const server = new McpServer({ name: 'proto', version: '1', logger: quiet }).tool(
      {
        name: 'proto',
        description: 'd',
        input: object({ constructor: str('Ctor'), toString: str('Ts') }),
      },
      () => text('ok'),
    );
    const proto = await server.listen({ port: 0 });
    try {
      // No header and no such argument: nothing is required, and the arguments are valid as they are.
      const reply = await mcp(proto.url, 'tools/call', { name: 'proto', arguments: {} });
      expect(reply.response.result?.content).toEqual([{ type: 'text', text: 'ok' }]);
    } finally {
      await proto.close();
    }
  });
});
