// Every Ajv in mrtr comes from createAjv(), so the official schema and the JSON Schemas tool authors write are read
// with the same options: 2020-12 (schema.json's dialect and MCP's default), formats checked, nothing on the console.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';
import { LINEAR_FORMATS } from './linear-formats.js';
import { linearRegExp } from './linear-regexp.js';
import { InvalidArgumentError } from './mrtr-error.js';
import { OFFICIAL_SCHEMA } from './official-schema.js';
import type { JsonObject } from './wire.js';

// ajv-formats is CommonJS: its plugin is the module itself, which every runtime and bundler hands over as `default`.
const addFormats = ajvFormats.default as unknown as (ajv: Ajv2020) => Ajv2020;

const SCHEMA_ID = 'https://modelcontextprotocol.io/schema/2026-07-28.json';

/**
 * A new Ajv with mrtr's options. Each is deliberate:
 * - `strict: false`: MCP schemas may use any 2020-12 keyword plus extension keywords such as `x-mcp-header`
 *   (tools.mdx), and JSON Schema says unknown keywords are ignored; strict mode would refuse them at compile time.
 *   The same holds for a `format` neither JSON Schema nor ajv-formats defines: it is an annotation, not a check.
 * - ajv-formats, with format validation on: a tool declaring `format: "email"` gets emails, not any string.
 * - `logger: false`: Ajv's default logger is `console`, which would bypass the server's injected logger (and,
 *   over stdio, could write where only JSON-RPC belongs). Nothing Ajv would log changes a result.
 * - `ownProperties: true`: instances come from peers, and a schema naming `constructor` or `toString` must not see
 *   Object.prototype's members on an object that lacks them (both for `properties` and for `required`).
 * - `allErrors: false`: the first error is all a message reports, and stopping there is cheaper.
 * - `code.regExp`: RE2 (linear-regexp.ts). `pattern` and `patternProperties` come from outside; a backtracking engine
 *   lets one argument hold the event loop for seconds. A pattern RE2 cannot run makes the compile throw.
 * - formats whose ajv-formats expression backtracks are replaced by linear ones (linear-formats.ts).
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    validateFormats: true,
    logger: false,
    ownProperties: true,
    allErrors: false,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  for (const [name, check] of Object.entries(LINEAR_FORMATS)) ajv.addFormat(name, check);
  return ajv;
}

let official: Ajv2020 | undefined;
const cache = new Map<string, ValidateFunction>();

function officialAjv(): Ajv2020 {
  if (official) return official;
  official = createAjv();
  // A copy: the imported module object is shared with every other importer.
  official.addSchema({ ...OFFICIAL_SCHEMA, $id: SCHEMA_ID });
  return official;
}

/** The compiled validator for one `$defs` entry of the official schema (compiled on first use, then cached). */
export function schemaValidator(definition: string): ValidateFunction {
  let fn = cache.get(definition);
  if (!fn) {
    const compiled = officialAjv().getSchema(`${SCHEMA_ID}#/$defs/${definition}`);
    if (!compiled) throw new InvalidArgumentError(`schema.json has no definition named ${definition}`);
    fn = compiled;
    cache.set(definition, fn);
  }
  return fn;
}

/** Compile the validators the server uses on every request, so no request pays for compilation. */
export function precompileSchemaValidators(definitions: readonly string[]): void {
  for (const d of definitions) schemaValidator(d);
}

// Authors' schemas get their own instance (same options): a schema's `$id` is registered in the instance that
// compiles it, so an author's `$id` equal to the official schema's — or to one another's — would otherwise make
// the official schema fail to load, or a later tool's schema fail to compile, depending on who came first.
let authored: Ajv2020 | undefined;

/**
 * Compile a JSON Schema written by a tool author (arguments, output). Throws Ajv's error when the schema itself is
 * invalid; callers add where it came from.
 */
export function compileJsonSchema(schema: JsonObject): ValidateFunction {
  authored ??= createAjv();
  return authored.compile(schema);
}

// Schemas a peer sends get a third instance, which forgets each one once compiled (see compilePeerSchema).
let peer: Ajv2020 | undefined;

/**
 * Compile a JSON Schema a peer sent (an upstream server's elicitation form). Ajv would keep every schema it ever
 * compiled, and a peer can send endlessly many, so it forgets this one at once: the caller caches what it reuses.
 * Throws Ajv's error when the schema itself is invalid.
 */
export function compilePeerSchema(schema: JsonObject): ValidateFunction {
  peer ??= createAjv();
  try {
    return peer.compile(schema);
  } finally {
    peer.removeSchema(schema);
  }
}

/** A short human-readable description of the first validation error, e.g. `params/name must be string`. */
export function describeSchemaErrors(fn: ValidateFunction): string {
  const err = fn.errors?.[0];
  if (!err) return 'does not match the schema';
  const where = err.instancePath ? err.instancePath.slice(1) : '(root)';
  return `${where} ${err.message ?? 'is invalid'}`;
}
