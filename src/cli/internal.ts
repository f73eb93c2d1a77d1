// Lent to the other rooms of mrtr, not public API: the CLI's own error classes, named in AnyMrtrError (src/errors.ts).

export type { UsageError } from './cli-args.js';
export type { ConformanceError } from './conformance-client.js';
