// Author-facing argument schemas: a zod schema or a plain JSON Schema, converted and compiled once at registration.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';
import type { JsonObject } from '../protocol/index.js';
import { compileJsonSchema, isJsonObject, withoutPrototypes } from '../protocol/index.js';
import { registrationError } from './errors.js';

export type ArgumentSchema = z.ZodType | JsonObject;

export type ArgumentCheck = { ok: true; value: unknown } | { ok: false; message: string };

export interface CompiledArguments {
  /** The JSON Schema advertised in tools/list. */
  jsonSchema: JsonObject;
  check(args: unknown): ArgumentCheck;
}

function isZod(schema: ArgumentSchema): schema is z.ZodType {
  return typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

export function compileArguments(schema: ArgumentSchema | undefined, where: string): CompiledArguments {
  if (schema === undefined) {
    return { jsonSchema: { type: 'object' }, check: (args) => ({ ok: true, value: args ?? {} }) };
  }
  if (isZod(schema)) {
    const jsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as JsonObject;
    delete jsonSchema.$schema;
    if (jsonSchema.type !== 'object')
      throw registrationError(`${where}: the argument schema must describe an object`);
    const names = propertyNames(jsonSchema);
    if (names.has('__proto__'))
      throw registrationError(
        `${where}: argument __proto__ cannot be used with a zod schema (zod skips that key); rename it`,
      );
    // zod looks each shape key up on the input: a key Object.prototype also has (constructor, toString, …) must
    // read as absent when the client left it out.
    const ownKeysOnly = [...names].some(isObjectMemberName);
    return {
      jsonSchema,
      check(args) {
        const parsed = schema.safeParse(ownKeysOnly ? withoutPrototypes(args ?? {}) : (args ?? {}));
        if (parsed.success) return { ok: true, value: parsed.data };
        const issue = parsed.error.issues[0];
        const path = issue && issue.path.length > 0 ? issue.path.join('.') : '(arguments)';
        return { ok: false, message: `${path}: ${issue?.message ?? 'invalid'}` };
      },
    };
  }
  if (schema.type !== 'object')
    throw registrationError(`${where}: the argument schema must have type "object"`);
  let validate: ValidateFunction;
  try {
    validate = compileJsonSchema(schema);
  } catch (error) {
    throw registrationError(`${where}: invalid JSON Schema: ${(error as Error).message}`);
  }
  // Ajv reads own keys only (ownProperties); the handler gets the same view of an argument named like an Object
  // member that the client left out: absent, not Object.prototype's.
  const ownKeysOnly = [...propertyNames(schema)].some(isObjectMemberName);
  return {
    jsonSchema: schema,
    check(args) {
      const value = args ?? {};
      if (validate(value)) return { ok: true, value: ownKeysOnly ? withoutPrototypes(value) : value };
      const err = validate.errors?.[0];
      const path = err?.instancePath ? err.instancePath.slice(1).replaceAll('/', '.') : '(arguments)';
      return { ok: false, message: `${path}: ${err?.message ?? 'invalid'}` };
    },
  };
}

/**
 * Whether a name is also an Object.prototype member (constructor, toString, …). Only tools and prompts declaring
 * such a name hand their handler a null-prototype copy of the arguments (withoutPrototypes); the rest pay nothing.
 */
export const isObjectMemberName = (name: string): boolean => name in Object.prototype;

// Keywords whose values are instances, not schemas: a "properties" inside them names nothing.
const INSTANCE_DATA: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples']);

/** Every name a JSON Schema gives a property, at any depth (under `properties` of any subschema). */
function propertyNames(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) propertyNames(item, into);
  } else if (isJsonObject(schema)) {
    for (const [keyword, value] of Object.entries(schema)) {
      if (INSTANCE_DATA.has(keyword)) continue;
      if (keyword === 'properties' && isJsonObject(value))
        for (const name of Object.keys(value)) into.add(name);
      propertyNames(value, into);
    }
  }
  return into;
}

/** A tool's outputSchema, compiled once: structured results must conform to it (tools.mdx "Output Schema"). */
export function compileOutput(schema: JsonObject, where: string): (value: unknown) => string | undefined {
  let validate: ValidateFunction;
  try {
    validate = compileJsonSchema(schema);
  } catch (error) {
    throw registrationError(`${where}: invalid output JSON Schema: ${(error as Error).message}`);
  }
  return (value) => {
    if (validate(value)) return undefined;
    const err = validate.errors?.[0];
    const path = err?.instancePath ? err.instancePath.slice(1).replaceAll('/', '.') : '(structuredContent)';
    return `${path}: ${err?.message ?? 'invalid'}`;
  };
}
