// `mrtr audit export --format ocsf|jsonl [--follow]`: every event of the trail, one JSON object a line, in a shape a
// SIEM reads; --follow keeps printing events as they are recorded, reading the trail again every second.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import {
  type AuditReader,
  type ExportProduct,
  openAuditReader,
  type StoredEvent,
  toJsonLine,
  toOcsf,
} from '../audit/index.js';

export const EXPORT_FORMATS = ['ocsf', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** How often --follow reads the trail again (a sink has no change feed: every kind is polled alike). */
export const FOLLOW_INTERVAL_MS = 1000;

function product(): ExportProduct {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return { name: 'mrtr', version: pkg.version };
}

export interface ExportOptions {
  format: ExportFormat;
  follow: boolean;
  since: string | undefined;
  /** Opens the reader again for each read (a JSON-lines reader holds what it read when opened). */
  reopen: () => Promise<AuditReader>;
}

/** Print the events; with follow, never returns (the process ends on a signal or a closed pipe). */
export async function exportEvents(first: AuditReader, o: ExportOptions): Promise<number> {
  const made = product();
  const line = o.format === 'jsonl' ? toJsonLine : (e: StoredEvent) => JSON.stringify(toOcsf(e, made));
  // Where each writer's chain was printed up to: a later read prints only what follows.
  const printed = new Map<string, number>();
  const print = async (events: readonly StoredEvent[]) => {
    const fresh = events.filter((e) => e.seq > (printed.get(e.instance) ?? 0));
    if (fresh.length === 0) return;
    for (const e of fresh) printed.set(e.instance, Math.max(e.seq, printed.get(e.instance) ?? 0));
    // JSON escapes every control character a terminal would act on, as --json output does.
    if (!process.stdout.write(`${fresh.map(line).join('\n')}\n`)) await once(process.stdout, 'drain');
  };
  const filter = o.since ? { since: o.since } : {};
  await print(await first.events(filter));
  if (!o.follow) return 0;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
    const reader = await o.reopen();
    try {
      await print(await reader.events(filter));
    } finally {
      await reader.close();
    }
  }
}

/** A reader of the trail the URL names, opened again for each read of --follow. */
export const reopenFor = (spec: string) => () => openAuditReader(spec);
