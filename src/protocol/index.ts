export * from './errors.js';
export * from './headers.js';
// `InputKind` itself is not re-exported here yet: src/index.ts re-exports both this index and src/server/index.ts,
// which still exports its own `InputKind` from server/context.ts, and two different declarations of one name under
// `export *` is a compile error (TS2308). Once server/context.ts re-exports this module's `InputKind`, add it here.
export {
  capabilitiesFor,
  clientSupports,
  declaredKinds,
  INPUT_KINDS,
  kindOfInputRequest,
} from './input-kinds.js';
export * from './json.js';
export * from './meta.js';
export * from './methods.js';
export { describeSchemaErrors, precompileSchemaValidators, schemaValidator } from './schema-validator.js';
export * from './wire.js';
export * from './x-mcp-header.js';
