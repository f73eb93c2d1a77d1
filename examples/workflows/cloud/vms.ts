// The cloud's inventory: virtual machines, their owners and environments, and the log of changes made to them.
// Shared by every cloud tool: resize_vm and delete_vm (which needs consent bound to the VM's state).
import type { Principal } from 'mrtr/server';
import { type Db, openDatabase, pick } from '../db.js';

export const SIZES = ['small', 'medium', 'large', 'xlarge'] as const;
export type Size = (typeof SIZES)[number];
const ENVIRONMENTS = ['production', 'staging', 'development'] as const;

export interface Vm {
  id: string;
  name: string;
  owner: string;
  environment: (typeof ENVIRONMENTS)[number];
  size: Size;
  /** A deleted VM keeps its row (the change log points at it) but is no one's to manage. */
  state: 'running' | 'stopped' | 'deleted';
}

/** The demo principals' own machines, so that a person trying the tools has some; the rest is everyone else's. */
const DEMO_OWNERS = ['alice', 'bob', 'carol'];

export function openCloud(dataDir: string): Db {
  return openDatabase(dataDir, {
    file: 'cloud.db',
    schema: `
      CREATE TABLE IF NOT EXISTS vms (id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT NOT NULL,
        environment TEXT NOT NULL, size TEXT NOT NULL, state TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS vms_owner ON vms (owner);
      CREATE TABLE IF NOT EXISTS vm_changes (flow_id TEXT PRIMARY KEY, vm_id TEXT NOT NULL REFERENCES vms(id),
        action TEXT NOT NULL, detail TEXT NOT NULL, by TEXT NOT NULL, at TEXT NOT NULL);`,
    seed(db, random) {
      const vm = db.prepare(
        'INSERT INTO vms (id, name, owner, environment, size, state) VALUES (?, ?, ?, ?, ?, ?)',
      );
      const roles = ['web', 'db', 'cache', 'worker', 'batch'];
      for (let i = 1; i <= 4000; i++) {
        const owner = i <= 30 ? (DEMO_OWNERS[i % DEMO_OWNERS.length] as string) : `user${i % 400}`;
        // The demo owners get every kind: a third of their machines is in production.
        const environment = i <= 30 ? ENVIRONMENTS[Math.floor(i / 3) % 3] : pick(ENVIRONMENTS, random);
        vm.run(
          `vm-${String(i).padStart(5, '0')}`,
          `${pick(roles, random)}-${i}`,
          owner,
          environment,
          pick(SIZES, random),
          random() < 0.8 ? 'running' : 'stopped',
        );
      }
    },
  });
}

export class Inventory {
  private readonly own;
  private readonly one;
  private readonly log;
  private readonly logged;
  constructor(readonly db: Db) {
    this.own = db.prepare<[string], Vm>(
      "SELECT * FROM vms WHERE owner = ? AND state != 'deleted' ORDER BY id",
    );
    this.one = db.prepare<[string], Vm>("SELECT * FROM vms WHERE id = ? AND state != 'deleted'");
    this.log = db.prepare(
      `INSERT INTO vm_changes (flow_id, vm_id, action, detail, by, at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (flow_id) DO NOTHING`,
    );
    this.logged = db.prepare<[string, string], { vm_id: string; detail: string }>(
      'SELECT vm_id, detail FROM vm_changes WHERE flow_id = ? AND action = ?',
    );
  }

  /** The change this flow made, if it made one: a round run again after it (a retry, a crash) answers with it. */
  changeOf(flowId: string, action: string): { vmId: string; detail: Record<string, unknown> } | undefined {
    const row = this.logged.get(flowId, action);
    return row && { vmId: row.vm_id, detail: JSON.parse(row.detail) as Record<string, unknown> };
  }

  /** The caller's own machines. */
  ownedBy(principal: Principal | undefined): Vm[] {
    return principal ? this.own.all(principal.subject) : [];
  }

  /** A machine the caller may manage: their own, or any for `admin`. Another's is reported as not found. */
  manageable(principal: Principal | undefined, id: string): Vm | undefined {
    const vm = this.one.get(id);
    if (!vm || !principal) return undefined;
    return vm.owner === principal.subject || principal.roles?.includes('admin') ? vm : undefined;
  }

  /** Apply a change once per flow: the log's key is the flow, so a re-run after a crash changes nothing twice. */
  change(flowId: string, vm: Vm, action: string, detail: object, by: string, apply: () => void): void {
    this.db.transaction(() => {
      const logged = this.log.run(
        flowId,
        vm.id,
        action,
        JSON.stringify(detail),
        by,
        new Date().toISOString(),
      );
      if (logged.changes === 1) apply();
    })();
  }
}
