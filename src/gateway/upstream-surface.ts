// What the gateway asks an upstream besides its tools: its prompts, resources and resource templates (listed), a
// prompt or a resource (one round at a time, so the upstream's questions reach the caller), and completions. Each
// goes out on the client that carries the caller's requests (upstream.ts), and a stdio child that died on the way is
// started again on the next request, as for tools.
import { type McpClient, RemoteError, type RoundOptions, type RoundResult } from '../client/index.js';
import {
  ErrorCode,
  type JsonObject,
  type PromptDefinition,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
} from '../protocol/index.js';
import type { EgressCaller } from './egress/index.js';
import type { Upstream } from './upstream.js';

/** What an upstream lists besides tools; a kind it does not serve lists empty. */
export interface UpstreamSurfaceLists {
  readonly prompts: PromptDefinition[];
  readonly resources: ResourceDefinition[];
  readonly templates: ResourceTemplateDefinition[];
}

/** Run `work` on the caller's client; a dead stdio child is dropped so the next request starts it again. */
async function onClient<T>(
  upstream: Upstream,
  caller: EgressCaller,
  work: (client: McpClient) => Promise<T>,
): Promise<T> {
  try {
    return await work(upstream.clientFor(caller));
  } catch (error) {
    upstream.failed(caller, error);
    throw error;
  }
}

/** A list the upstream does not offer (method not found) is an empty one: most servers serve only some kinds. */
async function orNone<T>(list: Promise<T[]>): Promise<T[]> {
  try {
    return await list;
  } catch (error) {
    if (error instanceof RemoteError && error.code === ErrorCode.MethodNotFound) return [];
    throw error;
  }
}

/** The upstream's prompts, resources and templates, listed now (the gateway's surface catalog caches them). */
export function listSurface(
  upstream: Upstream,
  caller: EgressCaller,
  signal?: AbortSignal,
): Promise<UpstreamSurfaceLists> {
  return onClient(upstream, caller, async (client) => {
    // One after the other: a 2025 upstream's first request opens its session, and the others then share it.
    const prompts = await orNone(client.listPrompts({ signal }));
    const resources = await orNone(client.listResources({ signal }));
    const templates = await orNone(client.listResourceTemplates({ signal }));
    return { prompts, resources, templates };
  });
}

/** One round of a prompts/get or resources/read upstream: its answer, or its questions for the caller. */
export function surfaceRound(
  upstream: Upstream,
  caller: EgressCaller,
  method: 'prompts/get' | 'resources/read',
  params: JsonObject,
  options: Omit<RoundOptions, 'timeoutMs'>,
): Promise<RoundResult> {
  return onClient(upstream, caller, (client) => client.round(method, params, options));
}

/** completion/complete upstream: its suggestions, as the upstream gave them. */
export function completeUpstream(
  upstream: Upstream,
  caller: EgressCaller,
  params: JsonObject,
  signal?: AbortSignal,
): Promise<JsonObject> {
  return onClient(upstream, caller, (client) => client.request('completion/complete', params, { signal }));
}
