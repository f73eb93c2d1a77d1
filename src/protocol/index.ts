export * from './errors.js';
export * from './headers.js';
export * from './json.js';
export * from './meta.js';
export * from './methods.js';
export { describeSchemaErrors, precompileSchemaValidators, schemaValidator } from './schema-validator.js';
export * from './wire.js';
