// Every error a caller may handle carries a stable `code`: code branches on it, never on the message.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm, FlowUsageError } from '../../src/flow/index.js';
import { MrtrError } from '../../src/protocol/index.js';
import { InvalidOptionError, McpServer, ServerError, text } from '../../src/server/index.js';
import { canonicalJson, Keyring, KeySpecError, NotJsonError } from '../../src/state/index.js';

const quiet = { info() {}, warn() {}, error() {} };
const server = () =>
  new McpServer({
    name: 'codes',
    version: '1',
    logger: quiet,
    stateKeys: Keyring.fromSpec(`k:${Buffer.alloc(32, 1).toString('base64url')}`),
  });
const code = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
  return 'did not throw';
};

describe('coded errors', () => {
  it('registration problems are ServerError ERR_REGISTRATION', () => {
    const s = server().tool({ name: 't', description: 'd' }, () => text('x'));
    expect(code(() => s.tool({ name: 't', description: 'd' }, () => text('x')))).toBe('ERR_REGISTRATION');
    expect(
      code(() => s.tool({ name: 'u', description: 'd', input: { type: 'string' } }, () => text('x'))),
    ).toBe('ERR_REGISTRATION');
    void s.core;
    const late = () => s.tool({ name: 'v', description: 'd' }, () => text('x'));
    expect(late).toThrow(ServerError);
    expect(code(late)).toBe('ERR_REGISTRATION');
  });

  it('options out of range are InvalidOptionError ERR_INVALID_OPTION (an MrtrError)', () => {
    const make = () => new McpServer({ name: 'n', version: '1', handlerTimeoutMs: -1 });
    expect(make).toThrow(InvalidOptionError);
    expect(make).toThrow(MrtrError);
    expect(code(make)).toBe('ERR_INVALID_OPTION');
    expect(code(() => server().http({ maxBodyBytes: 0 }))).toBe('ERR_INVALID_OPTION');
  });

  it('the flow and state rooms code theirs too', () => {
    const notAForm = () => elicitationForm(z.object({ nested: z.object({ a: z.string() }) }));
    expect(notAForm).toThrow(FlowUsageError);
    expect(code(notAForm)).toBe('ERR_FLOW_USAGE');
    expect(code(() => Keyring.fromSpec('no-colon'))).toBe('ERR_KEY_SPEC');
    expect(() => Keyring.fromSpec('no-colon')).toThrow(KeySpecError);
    expect(code(() => canonicalJson(Number.NaN))).toBe('ERR_NOT_JSON');
    expect(() => canonicalJson(1n)).toThrow(NotJsonError);
  });

  it('a round cap, page size or state cap that is not a usable integer is refused by its own name', () => {
    const opts = { name: 'n', version: '1' };
    for (const [option, value] of [
      ['maxRounds', Number.NaN],
      ['maxRounds', 1.5],
      ['maxRounds', 0],
      ['pageSize', 0],
      ['cacheTtlMs', -1],
      ['maxStateBytes', -5],
    ] as const) {
      const make = () => new McpServer({ ...opts, [option]: value });
      expect(make).toThrow(InvalidOptionError);
      expect(make).toThrow(`McpServer: ${option} must be an integer`);
    }
    expect(() =>
      server().tool({ name: 't', description: 'd', maxRounds: Number.NaN }, () => text('x')),
    ).toThrow('handler options: maxRounds must be an integer');
  });

  it('a guard or an observer of the wrong shape is refused at construction, not on every round', () => {
    const opts = { name: 'n', version: '1' };
    expect(() => new McpServer({ ...opts, guards: [{ name: 'g' }] })).toThrow(
      'McpServer: guards[0] needs a name and at least one of admit, ask, commit, release',
    );
    expect(() => new McpServer({ ...opts, observers: [{} as never] })).toThrow(
      'McpServer: observers[0] needs an observe(event) function',
    );
  });

  it('an unknown option (a typo a JavaScript caller makes) is refused by name, never ignored', () => {
    const make = () => new McpServer({ name: 'n', version: '1', guard: [] } as never);
    expect(make).toThrow(InvalidOptionError);
    expect(make).toThrow('McpServer: unknown option "guard" (known: name, version, title,');
  });
});
