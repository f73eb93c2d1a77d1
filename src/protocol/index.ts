export * from './errors.js';
export * from './headers.js';
export {
  capabilitiesFor,
  clientSupports,
  declaredKinds,
  INPUT_KINDS,
  type InputKind,
  kindOfInputRequest,
} from './input-kinds.js';
export * from './json.js';
export * from './meta.js';
export * from './methods.js';
export {
  compileJsonSchema,
  describeSchemaErrors,
  precompileSchemaValidators,
  schemaValidator,
} from './schema-validator.js';
export * from './wire.js';
export * from './x-mcp-header.js';
