// mrtr/console: the operator's console — approvals, flow timelines, audit integrity, the gateway and each person's
// connected accounts, in one place on the server's listener, each panel for the roles that may see it.
export { ApprovalsPanel } from './approvals-panel.js';
export { AuditPanel, type AuditPanelOptions } from './audit-panel.js';
export {
  ConnectionsPanel,
  type ConsoleConnectionOwner,
  type ConsoleConnectionSummary,
  type ConsoleConnections,
} from './connections-panel.js';
export { OperatorConsole, type OperatorConsoleOptions } from './console.js';
export { ConsoleUsageError } from './errors.js';
export { FLOWS_DEFAULTS, FlowsPanel } from './flows-panel.js';
export { LIVE_DEFAULTS, type LiveLimits, type LiveTopic } from './live.js';
export type { ConsolePanel, ConsoleRole, PanelAudience, PanelContext } from './panel.js';
export {
  CONSOLE_ROLES,
  type ConsoleRoles,
  consoleRolesOf,
  DEFAULT_CONSOLE_ROLES,
  parseConsoleRoles,
} from './roles.js';
