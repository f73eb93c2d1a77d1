// The example server's human controls (`mrtr serve --fixture example --tokens FILE`): request_access needs a
// four-eyes approval by a principal with the role approver; grant_role uses all three controls — consent to the
// exact grant, a step-up with the caller's TOTP code, then an approver's decision — and grants exactly once.
import { z } from 'zod';
import { type ControlEvent, HumanControls, totpSecretsFile } from '../../controls/index.js';
import { type McpServer, text } from '../../server/index.js';
import type { SharedStore } from '../../stores/index.js';

export interface ExampleControlsSetup {
  store: SharedStore;
  /** The TOTP secrets file `mrtr users totp` writes. */
  totpFile: string;
  onEvent?: (event: ControlEvent) => void;
  /** Told the controls once made: `mrtr serve` shows their approvals in the console. */
  onControls?: (controls: HumanControls) => void;
}

/** Each check while an approval is pending is a round, and the state must outlive a day's wait plus the grant. */
const WAITS_FOR_PEOPLE = { maxRounds: 1000, stateTtlMs: 25 * 60 * 60 * 1000 } as const;

const NEEDS_SIGN_IN = (tool: string) =>
  text(`${tool} needs an authenticated caller: serve with --tokens FILE (or --issuer URL)`, {
    isError: true,
  });

/**
 * Add request_access and (unless `grantRole: false`, when another grant_role takes its place, as in the demo
 * fixture) grant_role; returns the controls, attached to `server`, for other tools to share.
 */
export function addControlledTools(
  server: McpServer,
  setup: ExampleControlsSetup,
  { grantRole = true }: { grantRole?: boolean } = {},
): HumanControls {
  const controls = new HumanControls({
    store: setup.store,
    totp: totpSecretsFile(setup.totpFile),
    ...(setup.onEvent ? { onEvent: setup.onEvent } : {}),
  }).attach(server);
  setup.onControls?.(controls);
  // The demo's role table: who holds which role beyond their token (kept in this process).
  const granted = new Map<string, Set<string>>();

  server.tool(
    {
      name: 'request_access',
      title: 'Request access',
      description:
        'Ask for access to a resource. A person with the approver role (never you) must approve it at /mrtr/approvals.',
      input: z.object({
        resource: z.string().min(1).max(200).describe('What you need access to'),
        reason: z.string().min(1).max(500).describe('Why, for the reviewer'),
      }),
      ...WAITS_FOR_PEOPLE,
    },
    async ({ resource, reason }, ctx) => {
      if (!ctx.principal?.issuer || !server.signIn) return NEEDS_SIGN_IN('request_access');
      const grant = await controls.approval(ctx, {
        role: 'approver',
        reason,
        risk: 'medium',
        effect: { tool: 'request_access', resource, requester: ctx.principal.subject },
      });
      return text(
        `Access to ${resource} granted to ${ctx.principal.subject} (approved by ${grant.approvedBy.join(', ')})`,
      );
    },
  );

  if (!grantRole) return controls;
  server.tool(
    {
      name: 'grant_role',
      title: 'Grant a role',
      description:
        'Grant a role to a person: asks your consent to the exact grant, your second factor, then an approver’s decision.',
      input: z.object({
        subject: z.string().min(1).max(100).describe('Who receives the role'),
        role: z.string().min(1).max(100).describe('The role to grant'),
      }),
      ...WAITS_FOR_PEOPLE,
    },
    async ({ subject, role }, ctx) => {
      if (!ctx.principal?.issuer || !server.signIn) return NEEDS_SIGN_IN('grant_role');
      // The effect from facts read now: re-read at every round and at the moment of execution.
      const effectNow = () => ({
        tool: 'grant_role',
        subject,
        role,
        currentRoles: [...(granted.get(subject) ?? [])].sort().join(', ') || 'none',
        grantedBy: ctx.principal?.subject ?? '',
      });
      const consent = await controls.consent(ctx, {
        effect: effectNow(),
        message: `Grant the role ${role} to ${subject}?`,
      });
      await controls.stepUp(ctx, { reason: `Grant the role ${role} to ${subject}` });
      const grant = await controls.approval(ctx, {
        role: 'approver',
        reason: `${ctx.principal.subject} grants the role ${role} to ${subject}`,
        risk: 'high',
        effect: effectNow(),
      });
      return consent.execute(effectNow(), () => {
        const roles = granted.get(subject) ?? new Set<string>();
        roles.add(role);
        granted.set(subject, roles);
        return text(`Granted ${role} to ${subject} (approved by ${grant.approvedBy.join(', ')})`);
      });
    },
  );
  return controls;
}
