// The spec's reserved `_meta` keys (basic/index.mdx "_meta"): what an upstream's request may not carry through a
// gateway as if this server had set it.
import { describe, expect, it } from 'vitest';
import { isMcpReservedMetaKey, META_HUMAN_REQUIRED, MRTR_META_PREFIX } from '../../src/protocol/index.js';

describe('isMcpReservedMetaKey', () => {
  it.each([
    'io.modelcontextprotocol/protocolVersion',
    'io.modelcontextprotocol/related-task',
    'dev.mcp/anything',
    'org.modelcontextprotocol.api/x',
    'com.mcp.tools/x',
    'IO.MCP/x',
    'progressToken',
    'traceparent',
    'tracestate',
    'baggage',
  ])('%s is reserved', (key) => {
    expect(isMcpReservedMetaKey(key)).toBe(true);
  });

  it.each(['com.example.mcp/x', 'com.example/ui', 'mcp/x', 'plain', 'dev.mrtr/humanRequired'])(
    '%s is not reserved for MCP',
    (key) => {
      expect(isMcpReservedMetaKey(key)).toBe(false);
    },
  );
});

describe("mrtr's own prefix", () => {
  it('is the prefix of its hints', () => {
    expect(META_HUMAN_REQUIRED.startsWith(MRTR_META_PREFIX)).toBe(true);
  });
});
