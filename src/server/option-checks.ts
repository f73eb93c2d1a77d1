// One check and one message for every numeric option a user passes (limits, timeouts, sizes): a bad value fails
// at construction with the option's name, never later as a silent "no limit" (NaN compares false with anything).
import { InvalidOptionError } from './errors.js';

/** Largest delay a node timer holds; longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Throw a RangeError naming `owner` and `name` unless `value` is undefined or an integer from `min` to `max`. */
export function checkIntegerOption(
  owner: string,
  name: string,
  value: number | undefined,
  { min = 1, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidOptionError(
      `${owner}: ${name} must be an integer from ${min} to ${max}, got ${String(value)}`,
    );
  }
}
