// Durations as people write them in a config file: a whole number and one unit (30s, 5m, 1h, 24h, 7d). One unit
// only, on purpose: "1h30m" is easy to misread in a policy, "90m" is not.

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^([1-9][0-9]{0,8})(ms|s|m|h|d)$/;

/** Milliseconds in `text` ("30s", "5m", "1h", "24h", "7d", "500ms"), or undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** How to write a duration, for error messages. */
export const DURATION_HINT = 'a whole number and a unit: 500ms, 30s, 5m, 1h, 24h, 7d';
