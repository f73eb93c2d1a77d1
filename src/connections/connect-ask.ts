// ctx-side of a connection: the round's person's access token when they have connected, else a URL-mode question to
// the server's own connect page (a record per flow in the shared store, as step-up's), held while the person is on
// it. A refusal by the third party or a "no" to the question ends the call: never a loop of questions.
import type { ControlContext } from '../controls/index.js';
import { cameBack, gaveUp, heldForPerson } from '../controls/internal.js';
import { FlowEnded } from '../flow/index.js';
import type { SharedStore } from '../stores/index.js';
import type { UsableGrants } from './connect-grants.js';
import { type ConnectRecord, openConnect, readConnect, settleConnect } from './connect-record.js';
import { ConnectionRefused, ConnectionsUsageError } from './errors.js';
import type { ConnectionConfig, ConnectionOwner, TokenGrant } from './types.js';

export interface ConnectAskDeps {
  store: SharedStore;
  grants: UsableGrants;
  connectUrl: (id: string) => string;
  ttlMs: number;
  now: () => number;
  /** Waits (a while) for the callback to settle connect `id`: a client that came back to check is held, not spun. */
  hold: (id: string, signal: AbortSignal | undefined, stillPending: () => Promise<boolean>) => Promise<void>;
  used: (owner: ConnectionOwner, connection: string) => void;
}

/** The inputRequests key of the question to connect `name`. */
export const connectKey = (name: string) => `connect_${name}`;

export function ownerOf(ctx: ControlContext, name: string): ConnectionOwner {
  const p = ctx.principal;
  if (!p?.issuer)
    throw new ConnectionsUsageError(
      `connection "${name}" needs an authenticated caller (a principal with an issuer): a connection belongs to one person`,
    );
  return { issuer: p.issuer, subject: p.subject, ...(p.name === undefined ? {} : { name: p.name }) };
}

export async function connectedToken(
  ctx: ControlContext,
  config: ConnectionConfig,
  d: ConnectAskDeps,
): Promise<string> {
  const { name } = config;
  const label = config.label ?? name;
  const owner = ownerOf(ctx, name);
  const use = (grant: TokenGrant) => {
    ctx.audit.note({ connection: { name, used: true } });
    d.used(owner, name);
    return grant.accessToken;
  };
  const now = await current(d, owner, name, label, ctx.signal);
  if (now) return use(now);

  const key = connectKey(name);
  const no = gaveUp(ctx.inputResponses, key);
  if (no) {
    const word = no === 'decline' ? 'declined' : 'cancelled';
    ctx.audit.note({ connection: { name, refused: word } });
    throw new FlowEnded(
      `${word} by the user: connecting your ${label} account was ${word}, so nothing was done`,
      no === 'decline' ? 'declined' : 'cancelled',
    );
  }
  let record = await openConnect(
    d.store,
    { connection: name, flowId: ctx.flowId, owner, createdAt: d.now() },
    d.ttlMs,
  );
  if (record.state === 'done') {
    // Connected earlier in this call, but the grant is gone since (revoked, disconnected): connect again.
    await settleConnect(d.store, record.id, { state: 'pending' }, d.ttlMs);
    record = { ...record, state: 'pending' };
  }
  endIfRefused(ctx, record, label);
  if (cameBack(ctx.inputResponses, key)) {
    const stillPending = async () => (await readConnect(d.store, record.id))?.state === 'pending';
    await heldForPerson(ctx, d.hold(record.id, ctx.signal, stillPending));
    const after = await current(d, owner, name, label, ctx.signal);
    if (after) return use(after);
    endIfRefused(ctx, (await readConnect(d.store, record.id)) ?? record, label);
  }
  // The text changes every round (its number), so the flow never answers it from the previous round's "accept".
  await ctx.ask.url(
    `Connect your ${label} account: open the link, sign in there and allow access, then continue here ` +
      `(request ${ctx.round + 1} of this call).`,
    d.connectUrl(record.id),
    { key, humanRequired: 'consent', progress: `waiting for you to connect your ${label} account` },
  );
  const after = await current(d, owner, name, label, ctx.signal);
  if (after) return use(after);
  throw new FlowEnded(`your ${label} account is not connected, so nothing was done`, 'ended');
}

/** The grant to use now; an authorization server out of reach ends the call with a message saying so. */
async function current(
  d: ConnectAskDeps,
  owner: ConnectionOwner,
  name: string,
  label: string,
  signal: AbortSignal | undefined,
): Promise<TokenGrant | undefined> {
  try {
    return await d.grants.current(owner, name, signal);
  } catch (error) {
    if (error instanceof ConnectionRefused)
      throw new FlowEnded(
        `your ${label} account could not be used: ${error.message}. Nothing was done; try again later`,
        'ended',
      );
    throw error;
  }
}

function endIfRefused(ctx: ControlContext, record: ConnectRecord, label: string): void {
  if (record.state !== 'failed') return;
  ctx.audit.note({ connection: { name: record.connection, refused: record.reason ?? 'denied' } });
  throw new FlowEnded(
    `connecting your ${label} account failed: the ${label} authorization server refused (${record.message ?? record.reason}). Nothing was done`,
    'ended',
  );
}
