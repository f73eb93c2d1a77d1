// Every pattern mrtr's Ajv checks runs on RE2: a hostile value cannot make a schema check backtrack, a pattern RE2
// cannot run is refused with the reason (never run by a backtracking engine instead), and ECMA-262's meaning of
// `\s`, `.` and the empty classes is kept. The hostile strings here would take years under backtracking: a test
// that finishes is the proof.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { compileJsonSchema, compilePeerSchema, MrtrError } from '../../src/protocol/index.js';
import { LINEAR_FORMATS } from '../../src/protocol/linear-formats.js';
import { linearRegExp } from '../../src/protocol/linear-regexp.js';

const require = createRequire(import.meta.url);
const ajvFormats = require('ajv-formats/dist/formats.js') as { fullFormats: Record<string, unknown> };

/** A common nested-quantifier e-mail pattern: 39 characters of `a` and one `!` backtrack for seconds. */
const EMAIL =
  '^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$';
const HOSTILE = `${'a'.repeat(5000)}!`;

describe('patterns from outside run in linear time', () => {
  it('refuses a 5000-character hostile value for a nested-quantifier pattern, and accepts a real address', () => {
    const validate = compileJsonSchema({ type: 'string', pattern: EMAIL });
    expect(validate(HOSTILE)).toBe(false);
    expect(validate.errors?.[0]?.keyword).toBe('pattern');
    expect(validate('ann.lee@example.com')).toBe(true);
  });

  it('matches a hostile property name against patternProperties without backtracking', () => {
    const validate = compilePeerSchema({
      type: 'object',
      patternProperties: { [EMAIL]: { type: 'number' } },
      additionalProperties: false,
    });
    expect(validate({ [HOSTILE]: 1 })).toBe(false);
    expect(validate({ 'ann@example.com': 1 })).toBe(true);
    expect(validate({ 'ann@example.com': 'one' })).toBe(false);
  });

  it.each([
    ['(?=x)', /lookaround/],
    ['(a)\\1', /backreferences/],
    ['(?<!a)b', /lookaround/],
    ['a{2000}', /repeat count over 1000/],
  ])('refuses %s at compile time, naming the pattern and why', (pattern, why) => {
    let thrown: unknown;
    try {
      compileJsonSchema({ type: 'string', pattern });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MrtrError);
    expect((thrown as MrtrError).code).toBe('ERR_INVALID_ARGUMENT');
    expect((thrown as Error).message).toContain(JSON.stringify(pattern));
    expect((thrown as Error).message).toMatch(/RE2, the linear-time engine/);
    expect((thrown as Error).message).toMatch(why);
  });

  it('refuses a pattern JavaScript itself cannot read, as before', () => {
    expect(() => compileJsonSchema({ type: 'string', pattern: '[' })).toThrow(
      /pattern "\[" is not a valid regular expression/,
    );
  });

  it("keeps ECMA-262's meaning: Unicode spaces, a dot that stops at every line end, the empty classes", () => {
    const space = linearRegExp('^\\s+$', 'u');
    expect(space.test('\u00a0\u2003\u3000\ufeff\v')).toBe(true);
    expect(linearRegExp('^\\S+$', 'u').test('a\u00a0b')).toBe(false);
    expect(linearRegExp('^[\\s,]+$', 'u').test(' ,\u2028')).toBe(true);
    const dot = linearRegExp('^a.b$', 'u');
    expect(dot.test('a-b')).toBe(true);
    for (const end of ['\n', '\r', '\u2028', '\u2029']) expect(dot.test(`a${end}b`)).toBe(false);
    expect(linearRegExp('[]', 'u').test('anything')).toBe(false);
    expect(linearRegExp('^[^]$', 'u').test('\n')).toBe(true);
    expect(linearRegExp('^[[:a]+$', 'u').test('[:a')).toBe(true);
  });

  it('compiles a pattern once: the same pattern gives the same compiled object, named by its source', () => {
    const first = linearRegExp('^x+$', 'u');
    expect(linearRegExp('^x+$', 'u')).toBe(first);
    expect(String(first)).toBe('/^x+$/u');
    expect(String(linearRegExp('^y+$', 'u'))).not.toBe(String(first));
  });
});

describe("ajv-formats' formats", () => {
  it('checks `url` in linear time: 200,000 colons (minutes under its original expression) are refused', () => {
    const validate = compileJsonSchema({ type: 'string', format: 'url' });
    expect(validate(`http://${':'.repeat(200_000)}!`)).toBe(false);
    expect(validate('https://example.com:8443/path?q=1')).toBe(true);
  });

  it('gives `url` the answers of its original expression, private addresses included', () => {
    const original = ajvFormats.fullFormats.url as RegExp;
    const samples = [
      'http://example.com',
      'HTTPS://user:pw@example.com:8080/a/b?c#d',
      'ftp://1.2.3.4',
      'http://10.0.0.1',
      'http://100.0.0.1',
      'http://127.0.0.1:3000',
      'http://169.254.1.1',
      'http://169.25.1.1',
      'http://172.16.0.1',
      'http://172.31.0.1',
      'http://172.32.0.1',
      'http://172.160.0.1',
      'http://192.168.1.1',
      'http://192.169.1.1',
      'http://223.1.1.254',
      'http://224.1.1.1',
      'http://1.1.1.255',
      'http://10.0.0.1.example',
      'http://a@10.0.0.1@example.com',
      'http://exämple.com',
      'http://example',
      'http://example.com/a b',
      'http://example.com/a\u00a0b',
      'http://-example.com',
      'http://exa--mple.co',
      'mailto:ann@example.com',
      'http://example.com:1',
    ];
    for (const url of samples) expect([url, LINEAR_FORMATS.url?.(url)]).toEqual([url, original.test(url)]);
  });
});
