// Validators for the official 2026-07-28 JSON Schema, compiled once per definition and cached.
// Ajv is used in 2020-12 mode because schema.json declares that dialect.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

const require = createRequire(import.meta.url);
const addFormats = require('ajv-formats') as (ajv: Ajv2020) => Ajv2020;

const SCHEMA_ID = 'https://modelcontextprotocol.io/schema/2026-07-28.json';

let ajv: Ajv2020 | undefined;
const cache = new Map<string, ValidateFunction>();

function loadAjv(): Ajv2020 {
  if (ajv) return ajv;
  const url = new URL('../../schema/2026-07-28.json', import.meta.url);
  const schema = JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
  schema.$id = SCHEMA_ID;
  ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(schema);
  return ajv;
}

/** The compiled validator for one `$defs` entry of the official schema (compiled on first use, then cached). */
export function schemaValidator(definition: string): ValidateFunction {
  let fn = cache.get(definition);
  if (!fn) {
    const compiled = loadAjv().getSchema(`${SCHEMA_ID}#/$defs/${definition}`);
    if (!compiled) throw new Error(`schema.json has no definition named ${definition}`);
    fn = compiled;
    cache.set(definition, fn);
  }
  return fn;
}

/** Compile the validators the server uses on every request, so no request pays for compilation. */
export function precompileSchemaValidators(definitions: readonly string[]): void {
  for (const d of definitions) schemaValidator(d);
}

/** A short human-readable description of the first validation error, e.g. `params/name must be string`. */
export function describeSchemaErrors(fn: ValidateFunction): string {
  const err = fn.errors?.[0];
  if (!err) return 'does not match the schema';
  const where = err.instancePath ? err.instancePath.slice(1) : '(root)';
  return `${where} ${err.message ?? 'is invalid'}`;
}
