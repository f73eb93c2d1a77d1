// The gateway's policy: rules over upstream tools and callers, with CEL conditions over the call's arguments.
export { type CompilePolicyOptions, compilePolicy } from './compile.js';
export { DEFAULT_APPROVAL_EXPIRY_MS } from './compile-rule.js';
export {
  type ApprovalRequirement,
  CONTROLS,
  type Control,
  type Decision,
  type Policy,
  type PolicyCaller,
  type PolicyRule,
  type RateLimit,
  type Screening,
  type SurfaceDecision,
  type SurfaceKind,
  type SurfaceRef,
  type ToolRef,
} from './types.js';
export { type KnownTool, unknownArgumentWarnings } from './unknown-arguments.js';
