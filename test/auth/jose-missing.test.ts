// jose loads with the first signature check. If it cannot load, the check is refused as the verifier's outage
// (503-class, `verifier_unavailable`), not blamed on the issuer's keys, and the next check tries the load again.
import { afterEach, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.doUnmock('jose');
  vi.resetModules();
});

it('a jose that cannot load refuses the check as the verifier’s outage, and is tried again next time', async () => {
  let failing = true;
  vi.doMock('jose', async (original) => {
    if (failing) throw new Error('simulated: jose is missing');
    return original();
  });
  const { AuthRefusal, JwtVerifier } = await import('../../src/auth/index.js');
  const verifier = new JwtVerifier({
    issuer: 'https://issuer.example',
    audience: 'https://mcp.example/mcp',
    secret: 'a-shared-secret-of-at-least-32-bytes!',
  });
  const refusal = await Promise.resolve(verifier.verify('a.b.c')).catch((e: unknown) => e);
  expect(refusal).toBeInstanceOf(AuthRefusal);
  expect(refusal).toMatchObject({ reason: 'verifier_unavailable', status: 503 });
  failing = false;
  const second = await Promise.resolve(verifier.verify('a.b.c')).catch((e: unknown) => e);
  // Loaded now: the token itself is judged (and refused: it is no JWT).
  expect(second).toMatchObject({ status: 401 });
});
