// The examples of docs/human-controls.md: one server with a tool per control. test/controls/ drives it over HTTP and
// in Chromium; `controlsServer()` takes the tokens, the store and the TOTP file so each test gets its own.
import { BearerAuth, type DevTokens } from 'mrtr/auth';
import { ApprovalsPanel, OperatorConsole } from 'mrtr/console';
import { type ControlEvent, HumanControls, totpSecretsFile } from 'mrtr/controls';
import { McpServer, type RoundObserver, type TaskOptions, text } from 'mrtr/server';
import type { SharedStore } from 'mrtr/stores';
import { z } from 'zod';

/** A small VM inventory the consent example reads its facts from (a test changes it between rounds). */
export const vms = new Map([['prod-db-7', { memoryGb: 64, state: 'running', owner: 'bob' }]]);

export function controlsServer(o: {
  tokens: DevTokens;
  store: SharedStore;
  totpFile: string;
  resource: string;
  onEvent?: (e: ControlEvent) => void;
  now?: () => number;
  /** How long a check of a pending step-up or approval waits for the person (tests that poll set 0). */
  pendingWaitMs?: number;
  /** The tasks extension's options (a test sets a short poll interval). */
  tasks?: TaskOptions;
  /** Round observers (an audit trail; a test counts rounds). */
  observers?: RoundObserver[];
}): McpServer {
  // #region setup
  const server = new McpServer({
    name: 'controls',
    version: '1.0.0',
    auth: new BearerAuth({ verifier: o.tokens, resource: o.resource }),
    signIn: { devTokens: o.tokens },
    rounds: { replay: { store: o.store }, ...(o.observers ? { observers: o.observers } : {}) },
    ...(o.tasks ? { tasks: o.tasks } : {}),
  });
  // Approvals, step-ups, used codes and lockouts live in the store: every instance serves the same pages.
  const controls = new HumanControls({
    store: o.store,
    totp: totpSecretsFile(o.totpFile),
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    ...(o.now ? { now: o.now } : {}),
    ...(o.pendingWaitMs === undefined ? {} : { pendingWaitMs: o.pendingWaitMs }),
  }).attach(server);
  // #endregion

  // #region consent
  const vmEffect = (id: string) => {
    const vm = vms.get(id);
    if (!vm) throw new Error(`no VM ${id}`);
    return { tool: 'delete_vm', vm: id, memoryGb: vm.memoryGb, state: vm.state, owner: vm.owner };
  };
  server.tool(
    { name: 'delete_vm', description: 'Delete a VM', input: z.object({ id: z.string() }) },
    async ({ id }, ctx) => {
      const consent = await controls.consent(ctx, { effect: vmEffect(id), message: `Delete VM ${id}?` });
      // Facts read again at the point of execution: a VM that changed since the yes is not deleted.
      return consent.execute(vmEffect(id), () => {
        vms.delete(id);
        return text(`VM ${id} deleted`);
      });
    },
  );
  // #endregion

  // #region step-up
  server.tool(
    { name: 'show_recovery_codes', description: 'Needs your second factor' },
    async (_args, ctx) => {
      await controls.stepUp(ctx, { reason: 'Show the recovery codes of your account' });
      return text(`Recovery codes for ${ctx.principal?.subject}: 1111-2222, 3333-4444`);
    },
  );
  // #endregion

  // #region approval
  server.tool(
    {
      name: 'request_access',
      description: 'Ask for access to a resource; someone with the approver role must approve',
      input: z.object({ resource: z.string().min(1), reason: z.string().min(1) }),
      // Each check while the request is pending is a round: allow many, and keep the state valid for as long as
      // the request may wait plus the grant's hour.
      maxRounds: 1000,
      stateTtlMs: 25 * 60 * 60 * 1000,
    },
    async ({ resource, reason }, ctx) => {
      const grant = await controls.approval(ctx, {
        role: 'approver',
        reason,
        effect: { tool: 'request_access', resource, requester: ctx.principal?.subject ?? '' },
        expiresInMs: 24 * 60 * 60 * 1000,
      });
      return text(`Access to ${resource} granted (approved by ${grant.approvedBy.join(', ')})`);
    },
  );
  // #endregion

  // #region console
  // The operator's console on the same listener: approvers find the queue at /mrtr/console/approvals, kept live.
  const operatorConsole = new OperatorConsole({ panels: [new ApprovalsPanel(controls)] }).attach(server);
  controls.subscribe(() => operatorConsole.changed('approvals'));
  // #endregion
  return server;
}
