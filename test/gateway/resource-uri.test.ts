// A resource is judged and read in one spelling. An upstream resolves `..`, decodes `%73` and folds a scheme's case;
// had the gateway judged the raw string, a deny on `handbook/secret*` would not have seen `handbook/x/../secret.md`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalResourceUri } from '../../src/gateway/resource-uri.js';
import { type Loose, useGateway } from './fixtures/gateway-under-test.js';
import {
  type SurfaceUpstream,
  startMrtrSurfaceUpstream,
  startSdkSurfaceUpstream,
} from './fixtures/surface-upstreams.js';

describe('canonicalResourceUri', () => {
  it('keeps a plain URI, and lower-cases the scheme and the authority', () => {
    expect(canonicalResourceUri('file:///handbook/intro.md')).toBe('file:///handbook/intro.md');
    expect(canonicalResourceUri('FILE:///handbook/intro.md')).toBe('file:///handbook/intro.md');
    expect(canonicalResourceUri('HTTPS://Docs.Example.COM/A/b?Q=1')).toBe('https://docs.example.com/A/b?Q=1');
    expect(canonicalResourceUri('file:///handbook/')).toBe('file:///handbook/');
    expect(canonicalResourceUri('file:///handbook/a%20b.md')).toBe('file:///handbook/a%20b.md');
    expect(canonicalResourceUri('urn:isbn:0451450523')).toBe('urn:isbn:0451450523');
  });

  it.each([
    'file:///handbook/x/../secret.md',
    'file:///handbook/./secret.md',
    'file:///handbook//secret.md',
    'file:///handbook/%73ecret.md',
    'file:///handbook/..%2fsecret.md',
    'file:///handbook/%2e%2e/secret.md',
    'file:///handbook\\secret.md',
    'file:///handbook/%zz.md',
    'no-scheme/secret.md',
    ':///secret.md',
  ])('refuses %s: the upstream could read it as another resource', (uri) => {
    expect(canonicalResourceUri(uri)).toBeUndefined();
  });
});

const RULES = `  - name: handbook
    resources: ["up/file:///handbook/*"]
    roles: ["*"]
  - name: secrets
    resources: ["up/file:///handbook/secret*"]
    deny: true
`;

const SPELLINGS = [
  'up+file:///handbook/secret.md',
  'up+file:///handbook/x/../secret.md',
  'up+file:///handbook/./secret.md',
  'up+FILE:///handbook/secret.md',
  'up+file:///handbook/%73ecret.md',
  'up+file:///handbook//secret.md',
  'up+file:///handbook/..%2fsecret.md',
  'up+file:///handbook/%2e%2e/handbook/secret.md',
];

describe.each([
  ['mrtr', startMrtrSurfaceUpstream],
  ['official SDK', startSdkSurfaceUpstream],
])('a denied page behind the gateway, on the %s upstream', (_label, start) => {
  let upstream: SurfaceUpstream;
  beforeAll(async () => {
    upstream = await start();
  });
  afterAll(() => upstream?.close());

  it('is read in no spelling, and an allowed page still is', async () => {
    const gateway = await useGateway({ upstreamUrl: upstream.url, rules: RULES });
    for (const uri of SPELLINGS) {
      const reply = await gateway.request('alice', 'resources/read', { uri });
      expect(reply.response.result, uri).toBeUndefined();
      expect((reply.response.error as Loose)?.code, uri).toBe(-32602);
    }
    const intro = await gateway.request('alice', 'resources/read', { uri: 'up+file:///handbook/intro.md' });
    expect(JSON.stringify(intro.response.result)).toContain('intro');
  });

  it("is not suggested by the template's completions", async () => {
    const gateway = await useGateway({ upstreamUrl: upstream.url, rules: RULES });
    const reply = await gateway.request('alice', 'completion/complete', {
      ref: { type: 'ref/resource', uri: 'up+file:///handbook/{page}.md' },
      argument: { name: 'page', value: '' },
    });
    const values = (reply.response.result as Loose)?.completion?.values as string[];
    expect(values).toContain('intro');
    expect(values).not.toContain('secret');
  });
});
