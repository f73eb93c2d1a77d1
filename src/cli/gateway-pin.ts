// `mrtr gateway pin`: list every upstream's tools now, compare them with the lock file, and pin or accept what the
// admin names. Without --accept or --all it changes nothing: it shows each tool's status and, for a changed one,
// what changed line by line (--diff is accepted for clarity; showing is the default). --check is for CI: it writes
// nothing and exits 1 when a tool listed now is new or changed.
import { parseArgs } from 'node:util';
import {
  egressFor,
  loadGatewayConfig,
  PinBook,
  pinCommandPlan,
  type SeenTool,
  Upstream,
} from '../gateway/index.js';
import type { JsonObject } from '../protocol/index.js';
import { defaultLockFile } from './gateway-lock-file.js';

export async function pinCommand(argv: string[]): Promise<number> {
  let values: {
    config?: string;
    lock?: string;
    diff?: boolean;
    accept?: string[];
    all?: boolean;
    check?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string' },
        lock: { type: 'string' },
        diff: { type: 'boolean', default: false },
        accept: { type: 'string', multiple: true },
        all: { type: 'boolean', default: false },
        check: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`mrtr gateway pin: ${(error as Error).message}\n`);
    return 2;
  }
  if (values.config === undefined) {
    process.stderr.write('mrtr gateway pin: --config FILE is required\n');
    return 2;
  }
  if (values.check && (values.all || values.accept !== undefined)) {
    process.stderr.write(
      `mrtr gateway pin: --check writes nothing, so it cannot go with ${values.all ? '--all' : '--accept'}\n`,
    );
    return 2;
  }
  const lock = values.lock ?? defaultLockFile(values.config);
  let book: PinBook;
  let upstreams: Upstream[];
  try {
    const config = loadGatewayConfig(values.config);
    book = PinBook.load(lock);
    // An upstream each person reaches with their own account has no tools to list for nobody: the gateway pins
    // them when a connected person's listing first shows them.
    for (const spec of config.upstreams)
      if (spec.credentials.type === 'oauth')
        process.stderr.write(
          `mrtr gateway pin: upstream ${spec.name} skipped: each person connects their own account (credentials type oauth); the gateway pins its tools at the first listing of someone connected\n`,
        );
    upstreams = config.upstreams
      .filter((spec) => spec.credentials.type !== 'oauth')
      .map(
        (spec) =>
          new Upstream(spec, {
            egress: egressFor(spec.credentials),
            log: (line) => process.stderr.write(`mrtr gateway pin: ${line}\n`),
            timeoutMs: 30_000,
            maxCallers: 1,
          }),
      );
  } catch (error) {
    process.stderr.write(`mrtr gateway pin: ${(error as Error).message}\n`);
    return 2;
  }
  const seen: SeenTool[] = [];
  let failed = false;
  try {
    for (const upstream of upstreams) {
      try {
        for (const definition of await upstream.listTools({ subject: '' }))
          seen.push({
            upstream: upstream.name,
            tool: definition.name,
            definition: definition as unknown as JsonObject,
          });
      } catch (error) {
        failed = true;
        process.stderr.write(
          `mrtr gateway pin: upstream ${upstream.name}: cannot list its tools: ${(error as Error).message}\n`,
        );
      }
    }
  } finally {
    await Promise.allSettled(upstreams.map((u) => u.close()));
  }
  let plan: ReturnType<typeof pinCommandPlan>;
  try {
    plan = pinCommandPlan(book, seen, { accept: values.accept, all: values.all });
  } catch (error) {
    process.stderr.write(`mrtr gateway pin: ${(error as Error).message}\n`);
    return 2;
  }
  for (const line of plan.lines) process.stdout.write(`${line}\n`);
  for (const pattern of plan.unmatched)
    process.stderr.write(`mrtr gateway pin: --accept ${pattern} matched no tool listed now\n`);
  if (values.check) {
    if (plan.differing.length > 0)
      process.stderr.write(
        `mrtr gateway pin --check: ${plan.differing.length === 1 ? '1 tool listed now differs' : `${plan.differing.length} tools listed now differ`} from ${lock}: ${plan.differing.join(', ')}\n`,
      );
    return failed || plan.differing.length > 0 ? 1 : 0;
  }
  if (plan.changed) {
    plan.book.save();
    process.stdout.write(`wrote ${lock}; a running gateway takes it on SIGHUP\n`);
  }
  return failed || plan.unmatched.length > 0 ? 1 : 0;
}
