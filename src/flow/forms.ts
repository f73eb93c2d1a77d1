// Author-facing form schemas (zod) → the restricted elicitation schema: a flat object of primitives, enums and
// multi-selects (client/elicitation.mdx "Requested Schema"). Conversion happens once per schema object.
import { z } from 'zod';
import {
  describeSchemaErrors,
  emptyRecord,
  type JsonObject,
  schemaValidator,
  withoutPrototypes,
} from '../protocol/index.js';
import { FlowUsageError } from './errors.js';

export type FormSchema = z.ZodObject;

/** A form the wire can express, checked and converted once: build it at module level to fail at definition time. */
export interface ElicitationForm<T> {
  readonly requestedSchema: { type: 'object'; properties: Record<string, JsonObject>; required?: string[] };
  /** Validate an accepted answer; returns the parsed value or a message naming the wrong field. */
  parse(content: unknown): { ok: true; value: T } | { ok: false; message: string };
}

const converted = new WeakMap<FormSchema, ElicitationForm<unknown>>();

/** Convert and check a zod object schema for use as an elicitation form. Throws a clear error if it can't be. */
export function elicitationForm<S extends FormSchema>(schema: S): ElicitationForm<z.output<S>> {
  const cached = converted.get(schema);
  if (cached) return cached as ElicitationForm<z.output<S>>;
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as JsonObject;
  // Field names are the author's: a `__proto__` field must stay a field, not become the prototype.
  const properties = emptyRecord<JsonObject>();
  for (const [name, field] of Object.entries((json.properties ?? {}) as Record<string, JsonObject>)) {
    if (name === '__proto__')
      throw new FlowUsageError(
        'form field "__proto__": zod never reads or returns a key named __proto__; rename the field',
      );
    properties[name] = primitiveField(name, field);
  }
  const requestedSchema: ElicitationForm<unknown>['requestedSchema'] = { type: 'object', properties };
  if (Array.isArray(json.required) && json.required.length > 0)
    requestedSchema.required = json.required as string[];
  const check = schemaValidator('ElicitRequestFormParams');
  if (!check({ message: 'check', requestedSchema })) {
    throw new FlowUsageError(
      `form schema cannot be sent as an elicitation form: ${describeSchemaErrors(check)}`,
    );
  }
  const form: ElicitationForm<z.output<S>> = {
    requestedSchema,
    parse(content) {
      // A client's answer, read as its own keys only: zod looks each field up, and an absent `toString` field
      // must not read as Object.prototype's function. Forms are flat, so the copy is one level.
      const parsed = schema.safeParse(withoutPrototypes(content ?? {}, 1));
      if (parsed.success) return { ok: true, value: parsed.data };
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return { ok: false, message: `${where}${issue?.message ?? 'invalid answer'}` };
    },
  };
  converted.set(schema, form as ElicitationForm<unknown>);
  return form;
}

const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);

function pick(field: JsonObject, keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of keys) if (field[k] !== undefined) out[k] = field[k];
  return out;
}

function primitiveField(name: string, field: JsonObject): JsonObject {
  const fail = (why: string): never => {
    throw new FlowUsageError(
      `form field "${name}": ${why}; elicitation forms allow only strings, numbers, booleans, enums and multi-selects`,
    );
  };
  const common = pick(field, ['title', 'description', 'default']);
  if (Array.isArray(field.enum) && field.enum.every((v) => typeof v === 'string')) {
    return { type: 'string', enum: field.enum, ...common };
  }
  if (Array.isArray(field.oneOf) && field.oneOf.every((o) => typeof (o as JsonObject).const === 'string')) {
    return {
      type: 'string',
      oneOf: field.oneOf.map((o) => pick(o as JsonObject, ['const', 'title'])),
      ...common,
    };
  }
  switch (field.type) {
    case 'string': {
      const format = field.format;
      if (format !== undefined && !STRING_FORMATS.has(String(format)))
        fail(`string format "${String(format)}" is not supported`);
      return { type: 'string', ...pick(field, ['minLength', 'maxLength', 'format']), ...common };
    }
    case 'number':
    case 'integer':
      return { type: field.type, ...pick(field, ['minimum', 'maximum']), ...common };
    case 'boolean':
      return { type: 'boolean', ...common };
    case 'array': {
      const items = (field.items ?? {}) as JsonObject;
      if (!Array.isArray(items.enum) || !items.enum.every((v) => typeof v === 'string')) {
        fail('arrays must be multi-selects of string enum values');
      }
      return {
        type: 'array',
        items: { type: 'string', enum: items.enum },
        ...pick(field, ['minItems', 'maxItems']),
        ...common,
      };
    }
    case 'object':
      return fail('nested objects are not allowed');
    default:
      return fail(`type ${JSON.stringify(field.type ?? 'unknown')} is not supported`);
  }
}
