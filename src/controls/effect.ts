// An effect: what a tool will do, as JSON the person is shown and the controls bind their answer to. Its digest is
// the canonical JSON's SHA-256, so two effects are the same only when every field is.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../state/index.js';
import { ControlsUsageError } from './errors.js';

/** What will happen: the tool, the arguments that matter and the facts the author adds (strings, numbers, flags). */
export type Effect = Readonly<Record<string, string | number | boolean | null>>;

export function effectDigest(effect: Effect): string {
  return createHash('sha256').update(canonicalJson(effect)).digest('base64url');
}

export function checkEffect(effect: unknown, where: string): asserts effect is Effect {
  if (typeof effect !== 'object' || effect === null || Array.isArray(effect))
    throw new ControlsUsageError(`${where}: effect must be an object of strings, numbers and booleans`);
  for (const [k, v] of Object.entries(effect)) {
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
      throw new ControlsUsageError(`${where}: effect.${k} must be a string, number, boolean or null`);
  }
  if (Object.keys(effect).length === 0)
    throw new ControlsUsageError(`${where}: effect must name at least one fact`);
}
