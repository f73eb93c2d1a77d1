// The form-mode elicitation schema subset (client/elicitation.mdx "Requested Schema"): read it into fields,
// parse what a person types, and validate values.
import { isJsonObject, type JsonObject, linearRegExp, ownValue } from '../protocol/index.js';
import { secretAskedFor } from './secret-fields.js';

export type FieldValue = string | number | boolean | string[];

export interface FieldOption {
  value: string;
  label: string;
}

interface FieldBase {
  name: string;
  /** The title, or the property name. */
  label: string;
  description: string | undefined;
  required: boolean;
  default: FieldValue | undefined;
  /** What secret the field seems to ask for ("a password", …): forbidden in form mode, so the person is warned. */
  secret: string | undefined;
}
export interface StringField extends FieldBase {
  type: 'string';
  format: 'email' | 'uri' | 'date' | 'date-time' | undefined;
  minLength: number | undefined;
  maxLength: number | undefined;
  pattern: string | undefined;
}
export interface NumberField extends FieldBase {
  type: 'number' | 'integer';
  minimum: number | undefined;
  maximum: number | undefined;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}
export interface BooleanField extends FieldBase {
  type: 'boolean';
}
export interface ChoiceField extends FieldBase {
  type: 'choice';
  options: FieldOption[];
}
export interface MultiChoiceField extends FieldBase {
  type: 'multi';
  options: FieldOption[];
  minItems: number | undefined;
  maxItems: number | undefined;
}
/** A property outside the subset: asked for as raw JSON. */
export interface JsonField extends FieldBase {
  type: 'json';
}
export type FormField = StringField | NumberField | BooleanField | ChoiceField | MultiChoiceField | JsonField;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function options(schema: JsonObject): FieldOption[] | undefined {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum
      .filter((v): v is string => typeof v === 'string')
      .map((v, i) => ({ value: v, label: typeof names[i] === 'string' ? (names[i] as string) : v }));
  }
  const titled = Array.isArray(schema.oneOf)
    ? schema.oneOf
    : Array.isArray(schema.anyOf)
      ? schema.anyOf
      : undefined;
  if (titled) {
    const out: FieldOption[] = [];
    for (const o of titled) {
      if (!isJsonObject(o) || typeof o.const !== 'string') return undefined;
      out.push({ value: o.const, label: str(o.title) ?? o.const });
    }
    return out;
  }
  return undefined;
}

function fieldDefault(v: unknown): FieldValue | undefined {
  if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
    return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
}

/** Read a form's requestedSchema into fields, in property order. */
export function readForm(requestedSchema: JsonObject): FormField[] {
  const props = isJsonObject(requestedSchema.properties) ? requestedSchema.properties : {};
  const required = new Set(
    Array.isArray(requestedSchema.required)
      ? requestedSchema.required.filter((r) => typeof r === 'string')
      : [],
  );
  const fields: FormField[] = [];
  for (const [name, raw] of Object.entries(props)) {
    const s = isJsonObject(raw) ? raw : {};
    const title = str(s.title);
    const description = str(s.description);
    // Without a title, a short one-line description reads better than the raw property name.
    const shortDescription =
      description !== undefined && description.length <= 48 && !description.includes('\n')
        ? description
        : undefined;
    const base = {
      name,
      label: title ?? shortDescription ?? name,
      description: title === undefined && shortDescription !== undefined ? undefined : description,
      required: required.has(name),
      default: fieldDefault(s.default),
      secret: secretAskedFor(name, s),
    };
    const choices = options(s);
    if (s.type === 'string' && choices) {
      fields.push({ ...base, type: 'choice', options: choices });
    } else if (s.type === 'string') {
      const f = str(s.format);
      fields.push({
        ...base,
        type: 'string',
        format: f === 'email' || f === 'uri' || f === 'date' || f === 'date-time' ? f : undefined,
        minLength: num(s.minLength),
        maxLength: num(s.maxLength),
        pattern: str(s.pattern),
      });
    } else if (s.type === 'number' || s.type === 'integer') {
      // zod and friends emit ±MAX_SAFE_INTEGER as bounds of any integer: no bound a person needs to see.
      const min = num(s.minimum);
      const max = num(s.maximum);
      fields.push({
        ...base,
        type: s.type,
        minimum: min !== undefined && min > Number.MIN_SAFE_INTEGER ? min : undefined,
        maximum: max !== undefined && max < Number.MAX_SAFE_INTEGER ? max : undefined,
        ...(num(s.exclusiveMinimum) !== undefined ? { exclusiveMinimum: num(s.exclusiveMinimum) } : {}),
        ...(num(s.exclusiveMaximum) !== undefined ? { exclusiveMaximum: num(s.exclusiveMaximum) } : {}),
      });
    } else if (s.type === 'boolean') {
      fields.push({ ...base, type: 'boolean' });
    } else if (s.type === 'array' && isJsonObject(s.items) && options(s.items)) {
      fields.push({
        ...base,
        type: 'multi',
        options: options(s.items) as FieldOption[],
        minItems: num(s.minItems),
        maxItems: num(s.maxItems),
      });
    } else {
      fields.push({ ...base, type: 'json' });
    }
  }
  return fields;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

function validDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return (
    !Number.isNaN(d.getTime()) && d.getUTCDate() === Number(m[3]) && d.getUTCMonth() + 1 === Number(m[2])
  );
}

/** Check one value against its field. Returns a message for a person, or undefined when valid. */
export function checkValue(field: FormField, value: unknown): string | undefined {
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be text';
      const len = [...value].length;
      if (field.minLength !== undefined && len < field.minLength)
        return `must be at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && len > field.maxLength)
        return `must be at most ${field.maxLength} characters`;
      if (field.format === 'email' && !EMAIL.test(value))
        return 'must be an email address, like name@example.com';
      if (field.format === 'uri' && !URL.canParse(value))
        return 'must be a full URI, like https://example.com/page';
      if (field.format === 'date' && !validDate(value)) return 'must be a date, like 2026-07-28';
      if (field.format === 'date-time' && (!DATE_TIME.test(value) || Number.isNaN(Date.parse(value))))
        return 'must be a date and time, like 2026-07-28T14:30:00Z';
      if (field.pattern !== undefined) {
        // The server's pattern runs on RE2 (linear time): a hostile one cannot freeze the person's terminal.
        let pattern: ReturnType<typeof linearRegExp> | undefined;
        try {
          pattern = linearRegExp(field.pattern, 'u');
        } catch {
          // A pattern RE2 cannot run is the server's problem; the server validates again.
        }
        if (pattern && !pattern.test(value)) return `must match the pattern ${field.pattern}`;
      }
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (field.minimum !== undefined && value < field.minimum) return `must be at least ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `must be at most ${field.maximum}`;
      if (field.exclusiveMinimum !== undefined && value <= field.exclusiveMinimum)
        return `must be more than ${field.exclusiveMinimum}`;
      if (field.exclusiveMaximum !== undefined && value >= field.exclusiveMaximum)
        return `must be less than ${field.exclusiveMaximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be yes or no';
    case 'choice':
      return typeof value === 'string' && field.options.some((o) => o.value === value)
        ? undefined
        : `must be one of: ${field.options.map((o) => o.label).join(', ')}`;
    case 'multi': {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
        return 'must be a list of choices';
      const unknown = value.filter((v) => !field.options.some((o) => o.value === v));
      if (unknown.length > 0) return `${unknown.join(', ')} is not a choice`;
      if (new Set(value).size !== value.length) return 'each choice may appear once';
      if (field.minItems !== undefined && value.length < field.minItems)
        return `choose at least ${field.minItems}`;
      if (field.maxItems !== undefined && value.length > field.maxItems)
        return `choose at most ${field.maxItems}`;
      return undefined;
    }
    case 'json':
      return undefined;
  }
}

/** Check a whole form answer: required fields present, every value valid. Returns the first problem. */
export function checkContent(fields: readonly FormField[], content: unknown): string | undefined {
  if (!isJsonObject(content)) return 'the answer must be an object of field values';
  for (const field of fields) {
    // Only answers the content holds: a field named `constructor` is not answered by Object's.
    const v = ownValue(content, field.name);
    if (v === undefined) {
      if (field.required) return `${field.label} is required`;
      continue;
    }
    const problem = checkValue(field, v);
    if (problem) return `${field.label} ${problem}`;
  }
  return undefined;
}

export type Parsed = { ok: true; value: FieldValue | undefined } | { ok: false; message: string };

function pick(field: ChoiceField | MultiChoiceField, token: string): string | undefined {
  const t = token.trim();
  if (/^\d+$/.test(t)) {
    const o = field.options[Number(t) - 1];
    if (o) return o.value;
  }
  const exact = field.options.find((o) => o.value === t || o.label === t);
  if (exact) return exact.value;
  const lower = t.toLowerCase();
  const loose = field.options.filter(
    (o) => o.value.toLowerCase() === lower || o.label.toLowerCase() === lower,
  );
  return loose.length === 1 ? loose[0]?.value : undefined;
}

/**
 * Turn what a person typed into a field value. Empty input takes the default, or leaves an optional field out.
 */
export function parseTyped(field: FormField, typed: string): Parsed {
  const text = typed.trim();
  if (text === '') {
    if (field.default !== undefined) return { ok: true, value: field.default };
    if (!field.required) return { ok: true, value: undefined };
    return { ok: false, message: 'an answer is required' };
  }
  let value: unknown;
  switch (field.type) {
    case 'string':
      value = typed;
      break;
    case 'number':
    case 'integer':
      value = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
      break;
    case 'boolean': {
      const t = text.toLowerCase();
      if (['y', 'yes', 'true', '1'].includes(t)) value = true;
      else if (['n', 'no', 'false', '0'].includes(t)) value = false;
      else return { ok: false, message: 'answer y or n' };
      break;
    }
    case 'choice': {
      value = pick(field, text);
      if (value === undefined)
        return { ok: false, message: `choose 1-${field.options.length} or type an option` };
      break;
    }
    case 'multi': {
      const picked: string[] = [];
      for (const token of text.split(',')) {
        if (token.trim() === '') continue;
        const v = pick(field, token);
        if (v === undefined) return { ok: false, message: `"${token.trim()}" is not one of the choices` };
        picked.push(v);
      }
      value = picked;
      break;
    }
    case 'json':
      try {
        value = JSON.parse(text);
      } catch {
        value = typed;
      }
      return { ok: true, value: value as FieldValue };
  }
  const problem = checkValue(field, value);
  return problem ? { ok: false, message: problem } : { ok: true, value: value as FieldValue };
}

/** Reduce a label or value to letters and digits, so "Won't fix" and "wont_fix" compare equal. */
const plain = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/**
 * Show a value the way it will be sent: a choice whose title does not read as its value also shows the value, so an
 * option titled "Cancel" that sends `approve_wire_transfer` cannot hide what it does.
 */
export function showSent(field: FormField, value: FieldValue): string {
  if (field.type !== 'choice' && field.type !== 'multi') return showValue(field, value);
  const one = (v: string) => {
    const label = field.options.find((o) => o.value === v)?.label ?? v;
    return plain(label) === plain(v) ? label : `${label} (sends ${JSON.stringify(v)})`;
  };
  return Array.isArray(value) ? value.map(one).join(', ') : one(String(value));
}

/** Show a value the way a person would type it. */
export function showValue(field: FormField, value: FieldValue): string {
  if (field.type === 'boolean') return value ? 'yes' : 'no';
  const label = (v: string) =>
    field.type === 'choice' || field.type === 'multi'
      ? (field.options.find((o) => o.value === v)?.label ?? v)
      : v;
  if (Array.isArray(value)) return value.map(label).join(', ');
  return typeof value === 'string' ? label(value) : String(value);
}
