// The rows of `npm run bench -- --gateway` (lib/gateway-compare.mjs), in run order: the same stdio work through mrtr's
// gateway and through the proxies people install, and an HTTP upstream on the official SDK, straight and through the
// gateway, one server of each protocol era. Each row is a lib/gateway-stack.mjs launch (`upstream`, `front`) and a
// caller of one protocol era.

/** The tool each upstream's call runs, and what it answers. */
export const WORK = {
  fs: 'read_text_file of a 20-byte file, official filesystem server over stdio',
  sdk: 'echo, official TypeScript SDK 2.4.0 (2026-07-28, stateless) over Streamable HTTP',
  sdk2025: 'echo, official TypeScript SDK 1.x (2025-11-25, stateless) over Streamable HTTP',
};

/** The straight call each HTTP upstream's rows are compared with (added latency, the upstream's own CPU per call). */
export const DIRECT_OF = { sdk: 'sdk-direct-2026', sdk2025: 'sdk2025-direct-2025' };

export const GATEWAY_ROWS = [
  {
    name: 'fs-gateway-2026',
    upstream: 'fs',
    front: 'gateway',
    era: '2026',
    label: 'mrtr gateway, 2026 caller',
  },
  {
    name: 'fs-gateway-2025',
    upstream: 'fs',
    front: 'gateway',
    era: '2025',
    label: 'mrtr gateway, 2025 caller',
  },
  {
    name: 'fs-gateway-full-2026',
    upstream: 'fs',
    front: 'full',
    era: '2026',
    label: 'mrtr gateway, every control, 2026',
  },
  {
    name: 'fs-mcp-proxy-2026',
    upstream: 'fs',
    front: 'mcp-proxy',
    era: '2026',
    label: 'mcp-proxy, 2026 caller',
  },
  {
    name: 'fs-mcp-proxy-2025',
    upstream: 'fs',
    front: 'mcp-proxy',
    era: '2025',
    label: 'mcp-proxy, 2025 caller',
  },
  {
    name: 'fs-supergateway-2025',
    upstream: 'fs',
    front: 'supergateway',
    era: '2025',
    label: 'supergateway, 2025 caller',
  },
  { name: 'sdk-direct-2026', upstream: 'sdk', front: 'none', era: '2026', label: 'SDK server, straight' },
  {
    name: 'sdk-gateway-2026',
    upstream: 'sdk',
    front: 'gateway',
    era: '2026',
    label: 'mrtr gateway, 2026 caller',
  },
  {
    name: 'sdk-gateway-2025',
    upstream: 'sdk',
    front: 'gateway',
    era: '2025',
    label: 'mrtr gateway, 2025 caller',
  },
  {
    name: 'sdk2025-direct-2025',
    upstream: 'sdk2025',
    front: 'none',
    era: '2025',
    label: 'SDK 1.x server, straight',
  },
  {
    name: 'sdk2025-gateway-2026',
    upstream: 'sdk2025',
    front: 'gateway',
    era: '2026',
    label: 'mrtr gateway, 2026 caller',
  },
  {
    name: 'sdk2025-gateway-2025',
    upstream: 'sdk2025',
    front: 'gateway',
    era: '2025',
    label: 'mrtr gateway, 2025 caller',
  },
];
export const GATEWAY_ROW_NAMES = GATEWAY_ROWS.map((r) => r.name);

/** The tool a row's caller names: the upstream's own name, or the gateway's `<upstream>__<tool>`. */
export function toolOf(row) {
  const tool = row.upstream === 'fs' ? 'read_text_file' : 'echo';
  if (row.front === 'gateway') return `up__${tool}`;
  if (row.front === 'full') return `up0__${tool}`;
  return tool;
}

/** mrtr's gateway needs a caller (dev token); the proxies and the bare SDK server take anonymous calls. */
export const signedIn = (row) => row.front === 'gateway' || row.front === 'full';
