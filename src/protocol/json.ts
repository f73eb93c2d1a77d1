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
 * Whether a parsed JSON value nests deeper than `max` levels. Iterative, so a hostile 100,000-deep value cannot
 * overflow the stack here; whatever walks it recursively later (a validator, JSON.stringify) can then be spared it.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
