// `mrtr audit flows | show | verify | checkpoint | keygen`: read an audit trail back, check it, export its
// checkpoints, make a signing key. Every reading command takes `--audit URL`, the syntax `mrtr serve --audit` takes.
import { writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  AUDIT_DEFAULTS,
  AUDIT_SYNTAX,
  type AuditReader,
  AuditSigner,
  AuditVerifier,
  BundleReader,
  exportBundle,
  openAuditReader,
  verifyReader,
} from '../audit/index.js';
import { flowsOf, recordsOf, sinceTime, splitNotes } from '../audit/internal.js';
import { InvalidArgumentError, MrtrError } from '../protocol/index.js';
import { EXPORT_FORMATS, type ExportFormat, exportEvents, reopenFor } from './audit-export.js';
import { flowsTable, flowTimeline, styleFor, verifyText } from './audit-format.js';

/** Each command's synopsis and what it does: the whole usage and `mrtr audit <command> --help` are made of these. */
const COMMANDS: ReadonlyArray<readonly [name: string, synopsis: string, about: string]> = [
  [
    'flows',
    'flows [--principal S] [--target T] [--outcome O] [--since 1h|ISO] [--json]',
    `a table of flows (outcome: input_required, complete, tool_error, denied, declined, cancelled,
        refused, error); WHY names the rule, person or cancel that decided`,
  ],
  ['show', 'show <flowId> [--json]', 'one flow as a timeline, round by round'],
  [
    'verify',
    'verify [--vkey KEY]... [--checkpoint FILE]... [--json]',
    `check every chain and checkpoint: exit 0 when intact, 1 naming the first bad event;
        --vkey (or MRTR_AUDIT_VKEY) is the key checkpoints must be signed with; --checkpoint FILE is an export
        kept elsewhere, which also catches a truncated tail`,
  ],
  [
    'checkpoint',
    'checkpoint [--out FILE]',
    "export each writer's latest checkpoint (C2SP signed notes) to keep elsewhere",
  ],
  [
    'export',
    'export --format ocsf|jsonl [--follow] [--since 1h|ISO]',
    `every event, one JSON object a line, with its writer's seq and chain hash: OCSF API Activity (class 6003)
        or mrtr's records as stored; --follow keeps printing new events (the trail is read again every second)`,
  ],
  [
    'bundle',
    'bundle [--out FILE]',
    'write the whole trail (events, checkpoints, published verifier keys) as one JSON file to check elsewhere',
  ],
  ['keygen', 'keygen [--name NAME]', 'print a new audit signing key (MRTR_AUDIT_KEY) and its verifier key'],
];

const SOURCES = `--audit URL: ${AUDIT_SYNTAX} (default sqlite:./data/audit.db)
--bundle FILE: read a bundle (mrtr audit bundle, or the console's download) instead of a sink: flows, show and
        verify work offline; give --vkey, since keys inside a bundle are only as trustworthy as the file
`;

const USAGE = `usage: mrtr audit <command> [--audit URL] [options]

commands:
${COMMANDS.map(([, synopsis, about]) => `  ${synopsis}\n        ${about}\n`).join('')}
${SOURCES}`;

/** `mrtr audit <command> --help`: that command's synopsis, what it does, and where it reads from. */
function commandUsage(name: string): string | undefined {
  const command = COMMANDS.find(([n]) => n === name);
  if (command === undefined) return undefined;
  const [, synopsis, about] = command;
  // keygen reads no trail; every other command reads one.
  if (name === 'keygen') return `usage: mrtr audit ${synopsis}\n\n        ${about}\n`;
  return `usage: mrtr audit ${synopsis} [--audit URL]\n\n        ${about}\n\n${SOURCES}`;
}

/** A bundle is read whole into memory: past this, verify against the sink itself. */
const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;

const DEFAULT_AUDIT = 'sqlite:./data/audit.db';

const fail = (message: string, code = 2): number => {
  process.stderr.write(`mrtr audit: ${message}\n`);
  return code;
};

export async function auditCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(USAGE);
    return sub === undefined ? 2 : 0;
  }
  // Help before anything is parsed: `show --help` would otherwise take --help for a flow id.
  const help = commandUsage(sub);
  if (help !== undefined && rest.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(help);
    return 0;
  }
  // A flow id is base64url and may begin with '-': right after `show` it is the id, whatever it looks like.
  let args = rest;
  const leading: string[] = [];
  if (sub === 'show' && rest[0] !== undefined && !OPTION_NAMES.has(rest[0].split('=')[0]!)) {
    leading.push(rest[0]);
    args = rest.slice(1);
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values } = parsed;
  const positionals = [...leading, ...parsed.positionals];
  if (sub === 'keygen') {
    if (positionals.length > 0) return fail(`keygen takes no arguments, got '${positionals[0]}'`);
    let signer: AuditSigner;
    try {
      signer = AuditSigner.generate(values.name ?? AUDIT_DEFAULTS.keyName);
    } catch (error) {
      return fail((error as Error).message);
    }
    process.stdout.write(`MRTR_AUDIT_KEY=${signer.text}\nMRTR_AUDIT_VKEY=${signer.verifier.text}\n`);
    return 0;
  }
  if (!['flows', 'show', 'verify', 'checkpoint', 'bundle', 'export'].includes(sub))
    return fail(`unknown command '${sub}'\n\n${USAGE}`);
  if (sub === 'show' ? positionals.length !== 1 : positionals.length > 0)
    return fail(
      sub === 'show'
        ? 'show needs one flow id: mrtr audit show <flowId>'
        : `unexpected argument '${positionals[0]}'`,
    );
  let since: string | undefined;
  if (values.since !== undefined) {
    since = sinceTime(values.since);
    if (since === undefined)
      return fail(`--since must be like 90s, 30m, 1h, 7d or an ISO date, got '${values.since}'`);
  }
  if (sub === 'export' && !(EXPORT_FORMATS as readonly string[]).includes(values.format ?? ''))
    return fail(
      values.format === undefined
        ? 'export needs --format ocsf or --format jsonl'
        : `--format must be ocsf or jsonl, got '${values.format}'`,
    );
  if (sub !== 'export' && (values.format !== undefined || values.follow))
    return fail(`--format and --follow are for export, not ${sub}`);
  if (values.follow && values.bundle !== undefined)
    return fail('--follow reads a sink (--audit URL): a bundle does not grow');
  if (values.bundle !== undefined && values.audit !== undefined)
    return fail('give --audit URL or --bundle FILE, not both');
  if (values.bundle !== undefined && (sub === 'bundle' || sub === 'checkpoint'))
    return fail(`${sub} reads a sink (--audit URL): a bundle already holds the whole trail`);
  let reader: AuditReader;
  try {
    reader =
      values.bundle !== undefined
        ? await readBundleFile(values.bundle)
        : await openAuditReader(values.audit ?? DEFAULT_AUDIT);
  } catch (error) {
    // A trail that cannot be read as one fails verification (1); a wrong URL or a missing file is a usage error (2).
    return fail(
      (error as Error).message,
      error instanceof MrtrError && error.code === 'ERR_AUDIT_CORRUPT' ? 1 : 2,
    );
  }
  try {
    switch (sub) {
      case 'flows': {
        const flows = flowsOf(recordsOf(await reader.events(since ? { since } : {})), values);
        process.stdout.write(
          values.json ? `${JSON.stringify(flows, null, 2)}\n` : flowsTable(flows, styleFor(process.stdout)),
        );
        return 0;
      }
      case 'show': {
        const records = recordsOf(await reader.events({ flowId: positionals[0]! }));
        if (records.length === 0) return fail(`no flow ${positionals[0]} in ${reader.description}`, 1);
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ flowId: positionals[0], rounds: records }, null, 2)}\n`
            : flowTimeline(records, styleFor(process.stdout)),
        );
        return 0;
      }
      case 'verify':
        return await verify(reader, values);
      case 'bundle':
        return await writeBundle(reader, values.out);
      case 'export':
        return await exportEvents(reader, {
          format: values.format as ExportFormat,
          follow: values.follow ?? false,
          since,
          reopen: reopenFor(values.audit ?? DEFAULT_AUDIT),
        });
      default:
        return await exportCheckpoints(reader, values.out);
    }
  } catch (error) {
    return fail((error as Error).message, 1);
  } finally {
    await reader.close();
  }
}

const OPTIONS = {
  audit: { type: 'string' },
  principal: { type: 'string' },
  target: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
  json: { type: 'boolean', default: false },
  vkey: { type: 'string', multiple: true },
  checkpoint: { type: 'string', multiple: true },
  bundle: { type: 'string' },
  out: { type: 'string' },
  name: { type: 'string' },
  format: { type: 'string' },
  follow: { type: 'boolean', default: false },
} as const;
const OPTION_NAMES: ReadonlySet<string> = new Set(Object.keys(OPTIONS).map((name) => `--${name}`));

function parse(args: string[]) {
  return parseArgs({ args, allowPositionals: true, strict: true, options: OPTIONS });
}

async function verify(
  reader: AuditReader,
  values: { vkey?: string[] | undefined; checkpoint?: string[] | undefined; json?: boolean | undefined },
): Promise<number> {
  let keys =
    values.vkey ?? (process.env.MRTR_AUDIT_VKEY ? process.env.MRTR_AUDIT_VKEY.split(',') : undefined);
  if (keys === undefined) {
    keys = await reader.publishedKeys();
    process.stderr.write(
      reader instanceof BundleReader
        ? 'mrtr audit verify: no --vkey: checking checkpoints against the keys inside the bundle, which whoever made or changed the file could replace\n'
        : 'mrtr audit verify: no --vkey: checking checkpoints against the keys stored in the trail itself, which whoever can write to it could replace\n',
    );
  }
  // `--vkey "$MRTR_AUDIT_VKEY"` with the variable unset arrives as an empty key: say so, not "expected <name>+…".
  if (keys.some((key) => key.trim() === '')) {
    return fail(
      '--vkey is empty (is MRTR_AUDIT_VKEY set?): give the verifier key that mrtr serve printed at start-up ("its verifier key is mrtr-audit+…")',
    );
  }
  let verifiers: AuditVerifier[];
  try {
    verifiers = keys.map((k) => AuditVerifier.parse(k));
  } catch (error) {
    return fail((error as Error).message);
  }
  const exported: string[] = [];
  for (const file of values.checkpoint ?? []) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      return fail(`cannot read checkpoint file ${file}: ${(error as Error).message}`);
    }
    const notes = splitNotes(text);
    if (notes.length === 0) return fail(`${file} holds no checkpoint`);
    exported.push(...notes);
  }
  // A page of events at a time, checkpoints first (the order that never cries false truncation while the trail is
  // still written to).
  const report = await verifyReader(reader, { exported, verifiers });
  process.stdout.write(
    values.json ? `${JSON.stringify(report, null, 2)}\n` : verifyText(report, styleFor(process.stdout)),
  );
  return report.ok ? 0 : 1;
}

async function readBundleFile(path: string): Promise<AuditReader> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new InvalidArgumentError(`--bundle ${path} is not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof MrtrError) throw error;
    throw new InvalidArgumentError(`cannot read --bundle ${path}: ${(error as Error).message}`);
  }
  if (size > MAX_BUNDLE_BYTES)
    throw new InvalidArgumentError(
      `--bundle ${path} is larger than ${MAX_BUNDLE_BYTES / 1024 / 1024} MiB: verify against the sink (--audit URL) instead`,
    );
  return BundleReader.parse(await readFile(path, 'utf8'), path);
}

async function writeBundle(reader: AuditReader, out: string | undefined): Promise<number> {
  const bundle = await exportBundle(reader);
  const text = `${JSON.stringify(bundle)}\n`;
  if (out === undefined) process.stdout.write(text);
  else {
    writeFileSync(out, text);
    process.stderr.write(
      `mrtr audit bundle: ${bundle.events.length} event(s) and ${bundle.checkpoints.length} checkpoint(s) written to ${out}\n`,
    );
  }
  return 0;
}

async function exportCheckpoints(reader: AuditReader, out: string | undefined): Promise<number> {
  const latest = new Map<string, string>();
  for (const c of await reader.checkpoints()) latest.set(c.instance, c.note);
  if (latest.size === 0) return fail(`no checkpoint in ${reader.description} yet`, 1);
  const notes = [...latest.values()];
  const text = notes.join('\n');
  if (out === undefined) process.stdout.write(text);
  else {
    writeFileSync(out, text);
    process.stderr.write(`mrtr audit checkpoint: ${notes.length} checkpoint(s) written to ${out}\n`);
  }
  return 0;
}
