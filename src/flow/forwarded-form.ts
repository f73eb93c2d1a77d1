// Checks an answer to a relayed form (ask.forward) against the requestedSchema the upstream wrote. What is compiled
// is the restricted subset the spec defines (client/elicitation.mdx "Requested Schema"), rebuilt from the keywords
// that constrain a value: an upstream's `$id`, `$ref` or `$schema` never reaches the validator, and an option list
// compiles as one `enum`, not as thousands of `oneOf` branches.
import {
  compilePeerSchema,
  describeSchemaErrors,
  emptyRecord,
  isJsonObject,
  type JsonObject,
} from '../protocol/index.js';
import { canonicalJson } from '../state/index.js';
import { FlowUsageError } from './errors.js';

/** Says what is wrong with a form's content, or undefined when it matches the form. */
export type FormContentCheck = (content: unknown) => string | undefined;

// An upstream asks the same few forms over and over (every round re-runs the flow): compile each once, keep a few.
const MAX_CACHED = 256;
const compiled = new Map<string, ReturnType<typeof compilePeerSchema>>();

/** The check for one requestedSchema (already valid against schema.json's ElicitRequestFormParams). */
export function forwardedFormCheck(requestedSchema: JsonObject): FormContentCheck {
  const schema = constraintsOf(requestedSchema);
  const id = canonicalJson(schema);
  let validate = compiled.get(id);
  if (!validate) {
    try {
      validate = compilePeerSchema(schema);
    } catch (error) {
      throw new FlowUsageError(
        `ask.forward: the form's requestedSchema cannot be checked: ${(error as Error).message}`,
      );
    }
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(id, validate);
  }
  const check = validate;
  return (content) => (check(content ?? {}) ? undefined : describeSchemaErrors(check));
}

/** The keywords of the restricted subset that constrain a value, and nothing else. */
function constraintsOf(requestedSchema: JsonObject): JsonObject {
  const properties = emptyRecord<JsonObject>();
  const fields = isJsonObject(requestedSchema.properties) ? requestedSchema.properties : {};
  for (const name of Object.keys(fields)) {
    // Ajv skips a `__proto__` property (a guard of its own), so an answer to it could not be checked: refuse it.
    if (name === '__proto__')
      throw new FlowUsageError(
        'ask.forward: the form\'s field "__proto__" cannot be checked; the upstream must rename it',
      );
    const field = fields[name];
    if (isJsonObject(field)) properties[name] = fieldConstraints(field);
  }
  const schema: JsonObject = { type: 'object', properties };
  if (Array.isArray(requestedSchema.required)) schema.required = requestedSchema.required;
  return schema;
}

function fieldConstraints(field: JsonObject): JsonObject {
  const out: JsonObject = {};
  const copy = (keys: string[]) => {
    for (const k of keys) if (field[k] !== undefined) out[k] = field[k];
  };
  switch (field.type) {
    case 'string': {
      out.type = 'string';
      const options = optionValues(field.enum, field.oneOf);
      if (options) out.enum = options;
      copy(['minLength', 'maxLength', 'format']);
      break;
    }
    case 'number':
    case 'integer':
      out.type = field.type;
      copy(['minimum', 'maximum']);
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'array': {
      out.type = 'array';
      const items = isJsonObject(field.items) ? field.items : {};
      const options = optionValues(items.enum, items.anyOf ?? items.oneOf);
      out.items = options ? { type: 'string', enum: options } : { type: 'string' };
      copy(['minItems', 'maxItems']);
      break;
    }
  }
  return out;
}

/** A single- or multi-select's values: a plain `enum`, or the `const`s of titled options. */
function optionValues(plain: unknown, titled: unknown): string[] | undefined {
  if (Array.isArray(plain) && plain.every((v) => typeof v === 'string')) return plain as string[];
  if (Array.isArray(titled) && titled.every((o) => isJsonObject(o) && typeof o.const === 'string'))
    return titled.map((o) => (o as JsonObject).const as string);
  return undefined;
}
