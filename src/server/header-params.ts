// Tool arguments mirrored into `Mcp-Param-{name}` headers. The rule is protocol/x-mcp-header.ts, the same one
// clients apply to tools/list: a tool the rule rejects is refused here, so the server never lists a tool that
// conforming clients would drop.

import { type HeaderBinding, type JsonObject, planToolHeaders } from '../protocol/index.js';
import { registrationError } from './errors.js';

/** Where a tool argument is mirrored into an `Mcp-Param-{name}` header (x-mcp-header in its inputSchema). */
export type HeaderParam = HeaderBinding;

/** The tool's header bindings; throws, naming every problem, when a client would reject the tool. */
export function headerParamsOf(inputSchema: JsonObject, where = 'tool'): HeaderParam[] {
  const plan = planToolHeaders(inputSchema);
  if (!plan.ok) throw registrationError(`${where}: ${plan.reason}`);
  return plan.bindings;
}
