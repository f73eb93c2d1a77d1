// Every error a caller may handle carries a stable `code`: code branches on it, never on the message.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { elicitationForm, FlowUsageError } from '../../src/flow/index.js';
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

  it('options out of range are InvalidOptionError ERR_INVALID_OPTION (still RangeErrors)', () => {
    const make = () => new McpServer({ name: 'n', version: '1', handlerTimeoutMs: -1 });
    expect(make).toThrow(InvalidOptionError);
    expect(make).toThrow(RangeError);
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
});
