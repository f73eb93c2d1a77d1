// The operator's console on `mrtr serve` and `mrtr gateway`: on whenever people can sign in (--tokens or --issuer),
// with the panels what was configured allows — approvals when the fixture has human controls, flows and audit
// integrity when there is an --audit trail to read, the gateway's panel under `mrtr gateway`.
import { type AuditReader, type AuditTrail, exportBundle, openAuditReader } from '../audit/index.js';
import {
  ApprovalsPanel,
  AuditPanel,
  type ConsolePanel,
  FlowsPanel,
  OperatorConsole,
  parseConsoleRoles,
} from '../console/index.js';
import type { HumanControls } from '../controls/index.js';

export const CONSOLE_FLAG_OPTIONS = {
  'console-role': { type: 'string', multiple: true },
} as const;

export interface ConsoleSetup {
  readonly console: OperatorConsole;
  /** Add the approvals panel (first in the navigation) once the server's controls exist. */
  withControls(controls: HumanControls): void;
  /**
   * Whether the console shows flows read from the trail, and so wants to hear of each round recorded. Without it, no
   * round observer is added for the console: every round would be traced for a ping no panel listens to.
   */
  readonly showsFlows: boolean;
  /** Add panels of the program's own (the gateway's). */
  add(panels: readonly ConsolePanel[]): void;
  close(): Promise<void>;
}

/** An audit file written as lines is read afresh on each request: the reader of a file holds what it read when opened. */
function freshJsonlReader(spec: string): AuditReader {
  const once = async <T>(read: (r: AuditReader) => Promise<T>): Promise<T> => {
    const r = await openAuditReader(spec);
    try {
      return await read(r);
    } finally {
      await r.close();
    }
  };
  return {
    description: spec,
    events: (filter) => once((r) => r.events(filter)),
    checkpoints: () => once((r) => r.checkpoints()),
    publishedKeys: () => once((r) => r.publishedKeys()),
    // One reading of the file for all the pages.
    eventPages: async function* (pageSize) {
      const r = await openAuditReader(spec);
      try {
        yield* r.eventPages?.(pageSize) ?? [await r.events()];
      } finally {
        await r.close();
      }
    },
    close: async () => {},
  };
}

export async function consoleFromFlags(
  values: { 'console-role'?: string[] | undefined; audit?: string | undefined },
  trail: AuditTrail | undefined,
  say: (line: string) => void,
): Promise<ConsoleSetup | { error: string }> {
  const roles = parseConsoleRoles(values['console-role'] ?? []);
  if (typeof roles === 'string') return { error: roles };
  const panels: ConsolePanel[] = [];
  let reader: AuditReader | undefined;
  if (trail && values.audit !== undefined) {
    if (values.audit === 'jsonl:-')
      say('mrtr serve: the console shows no flows: an audit trail on stdout cannot be read back');
    else {
      try {
        reader = values.audit.startsWith('jsonl:')
          ? freshJsonlReader(values.audit)
          : await openAuditReader(values.audit);
      } catch (error) {
        return { error: `the console cannot read --audit ${values.audit}: ${(error as Error).message}` };
      }
      panels.push(
        new FlowsPanel(reader),
        new AuditPanel({ reader, verifierKeys: [trail.verifierKey], bundle: (r) => exportBundle(r) }),
      );
    }
  }
  const console = new OperatorConsole({ panels, roles });
  return {
    console,
    showsFlows: reader !== undefined,
    withControls(controls) {
      if (panels.some((p) => p.id === 'approvals')) return;
      panels.unshift(new ApprovalsPanel(controls));
      controls.subscribe((event) => {
        if (event.control === 'approval') console.changed('approvals');
      });
    },
    add(more) {
      panels.push(...more);
    },
    async close() {
      console.close();
      await reader?.close();
    },
  };
}
