// Small JSON helpers every side needs when reading what a peer sent. One definition, so "is this an object?" and
// "is this key really there?" get the same answer on the server and the client.
import type { JsonObject } from './wire.js';

/** A JSON object: not null, not an array. (JSON-RPC params, results, capabilities and schemas are all of this kind.) */
export const isJsonObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The value of a key the object itself holds, or undefined. A peer chooses these keys, so inherited members
 * (`constructor`, `__proto__`, `toString`, …) must not read as present.
 */
export function ownValue(obj: JsonObject, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * An empty record without a prototype, for maps keyed by names a peer or an author chose: assigning `__proto__`
 * then stores a plain key instead of replacing the prototype, and `constructor` is not there before it is set.
 * JSON.stringify, Object.keys and Object.entries treat it like any other object.
 */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * A copy of a parsed JSON value in which every object is a null-prototype record, for code that looks keys up
 * instead of listing them. zod reads `input[key]` for each key of its shape, so on a plain object an absent
 * `constructor` or `toString` reads as Object.prototype's function and a valid value is refused (or, for
 * `z.any()`, accepted as that function). Objects nested deeper than `maxDepth` are kept as they are: the copy
 * stays bounded however deep a peer nests, and no schema a person writes reaches that far.
 */
export function withoutPrototypes(value: unknown, maxDepth = 64): unknown {
  if (typeof value !== 'object' || value === null || maxDepth <= 0) return value;
  if (Array.isArray(value)) return value.map((item) => withoutPrototypes(item, maxDepth - 1));
  const copy = emptyRecord<unknown>();
  for (const [key, item] of Object.entries(value)) copy[key] = withoutPrototypes(item, maxDepth - 1);
  return copy;
}

/**
 * Whether a parsed JSON value nests deeper than `max` levels. The recursion stops at `max`, so a hostile
 * 100,000-deep value cannot overflow the stack here; whatever walks it recursively later (a validator,
 * JSON.stringify) is then spared it. Allocation-free: it runs on every answer.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, max - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && nestsDeeperThan((value as Record<string, unknown>)[key], max - 1))
      return true;
  }
  return false;
}
