// A call to an upstream that needs the person's own account: the person connects before the first upstream round
// (a URL-mode question to the gateway's connect page), and an upstream that refuses the token (HTTP 401) has it
// dropped and the person asked once more. A second refusal in the same call ends it: never a loop of connects.
import { TransportFailure } from '../client/index.js';
import type { ControlContext } from '../controls/index.js';
import type { JsonObject } from '../protocol/index.js';
import { MrtrError } from '../protocol/index.js';
import { type ToolHandler, text } from '../server/index.js';
import type { SharedStore } from '../stores/index.js';
import type { PersonalUpstream } from './catalog.js';
import { connectionOwner, type EgressCaller, type UpstreamConnections } from './egress/index.js';

/** How long a call remembers that its upstream refused a token once (longer than any call's questions wait). */
const REFUSED_TTL_MS = 60 * 60_000;

/** An upstream answered HTTP 401 to the person's own token: thrown out of the round so it is never journaled. */
export class UpstreamRefusedToken extends MrtrError {
  declare readonly code: 'ERR_GATEWAY_EGRESS';
  constructor(
    upstream: string,
    /** Which token was refused (bearerDigest): a grant holding another one was not refused. */
    readonly refusedBearer?: string,
  ) {
    super('ERR_GATEWAY_EGRESS', `upstream ${upstream} refused the connected account's token (HTTP 401)`);
    this.name = 'UpstreamRefusedToken';
  }
}

export const isUnauthorized = (error: unknown): error is TransportFailure =>
  error instanceof TransportFailure && error.httpStatus === 401;

/** One oauth upstream's connections, as the forwarding handler and the catalog use them. */
export class UpstreamConnect implements PersonalUpstream {
  constructor(
    readonly upstream: string,
    private readonly connections: UpstreamConnections,
    private readonly store: SharedStore,
    /** A person just connected: their next listing is the upstream's own. */
    private readonly onConnected: () => void = () => {},
  ) {}

  async connected(caller: EgressCaller, signal?: AbortSignal): Promise<boolean> {
    const owner = connectionOwner(caller);
    return (
      owner !== undefined && (await this.connections.tokenFor(owner, this.upstream, signal)) !== undefined
    );
  }

  /** `<upstream>__connect`: shown while the gateway knows none of the upstream's tools; connects the caller. */
  readonly connectHandler: ToolHandler<JsonObject> = async (_args, ctx) => {
    await this.connections.token(ctx, this.upstream);
    this.onConnected();
    return text(
      `Your ${this.upstream} account is connected. Its tools are listed now: list the tools again to see them.`,
    );
  };

  /**
   * Before the flow's first upstream round: whether the person was connected when the call began is a step (the
   * same on every round), and a person who was not is sent to connect, on this round and each later one (the
   * question, once answered, is answered from the journal), so every question and step keeps its place.
   */
  async ready(ctx: ControlContext): Promise<void> {
    const owner = ownerOf(ctx);
    const connected = await ctx.ask.step(
      `mrtr/gateway/connected-${this.upstream}`,
      async () => (await this.connections.tokenFor(owner, this.upstream, ctx.signal)) !== undefined,
    );
    if (!connected) await this.connections.token(ctx, this.upstream);
  }

  /**
   * The upstream refused the person's token: it is dropped and the person asked to connect again (this throws the
   * question's pause). The second refusal within one call returns the message that ends it.
   */
  async refused(ctx: ControlContext, refusedBearer?: string): Promise<string> {
    const owner = ownerOf(ctx);
    await this.connections.forget(owner, this.upstream, 'refused by the upstream', refusedBearer);
    const first = await this.store.create(
      `mrtr:gateway:connect-refused:${this.upstream}:${ctx.flowId}`,
      '1',
      REFUSED_TTL_MS,
    );
    if (!first)
      return `upstream ${this.upstream} refused your account again right after you connected it; the call ends (the upstream may not accept this gateway's tokens: tell the gateway's operator)`;
    await this.connections.token(ctx, this.upstream);
    // token() returned without asking: the person connected meanwhile (another call): the round is tried again.
    return '';
  }
}

const ownerOf = (ctx: ControlContext) => ({
  issuer: ctx.principal?.issuer ?? '',
  subject: ctx.principal?.subject ?? '',
});
