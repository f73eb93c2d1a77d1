// What every method handler gets: the request on its way, and the parts of the server core it may use.
import type { Implementation, JsonObject, JsonRpcRequest, Result } from '../../protocol/index.js';
import type { Logger, RequestEnvironment } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import type { Registry } from '../registry.js';
import type { RequestMeta } from '../request-meta.js';
import type { RoundPipeline } from '../round/pipeline.js';
import type { RoundTrace } from '../round/trace.js';

/** One request on its way through a method. */
export interface Call {
  request: JsonRpcRequest;
  params: JsonObject;
  meta: RequestMeta;
  env: RequestEnvironment;
  /** Present when the server has round observers and this is an MRTR method. */
  trace: RoundTrace | undefined;
}

/** The server core as the methods see it. */
export interface Core {
  registry: Registry;
  pipeline: RoundPipeline;
  serverInfo: Implementation;
  instructions: string | undefined;
  pageSize: number;
  /** Cache hints on list results, discovery and resources/read (server/utilities/caching.mdx). */
  listTtlMs: number;
  handlerTimeoutMs: number;
  logger: Logger;
}

export type MethodHandler = (core: Core, call: Call) => MaybePromise<Result>;
