// The client's view of `x-mcp-header`: the rule and the encoding live in protocol/x-mcp-header.ts, shared with the
// server that refuses at registration every tool a client would exclude. Re-exported here for mrtr/client users.
export {
  type HeaderBinding,
  paramHeaders,
  planToolHeaders,
  type ToolHeaderPlan,
} from '../protocol/index.js';
