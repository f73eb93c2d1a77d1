// The official 2026-07-28 schema, imported rather than read from disk: runtimes without a file system load it too.
import schema from '../../schema/2026-07-28.json' with { type: 'json' };

export const OFFICIAL_SCHEMA: Readonly<Record<string, unknown>> = schema;
