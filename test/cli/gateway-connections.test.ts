// The OAuth client mrtr gateway gives each oauth upstream: plain http to an authorization server only when the
// upstream itself is on this machine (the demo, tests). An https upstream whose settings or metadata point at a
// loopback http endpoint is refused, so the gateway's client secret never goes to a local service.
import { describe, expect, it } from 'vitest';
import { gatewayFlowFor } from '../../src/cli/gateway-connections.js';

const base = { name: 'tracker', clientId: 'mrtr-gateway', clientSecret: 's3cret', scopes: ['tickets:read'] };

describe('mrtr gateway: each upstream connection’s OAuth client', () => {
  it('refuses a loopback http issuer for an https upstream', () => {
    expect(() =>
      gatewayFlowFor({ ...base, resource: 'https://tracker.example/mcp', issuer: 'http://127.0.0.1:9' }),
    ).toThrow(/https/);
  });

  it('takes a loopback http issuer for an upstream on this machine', () => {
    expect(
      gatewayFlowFor({ ...base, resource: 'http://127.0.0.1:4001/mcp', issuer: 'http://127.0.0.1:4002' }),
    ).toHaveProperty('start');
  });
});
