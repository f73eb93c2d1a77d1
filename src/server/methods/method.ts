// What every method handler gets: the request on its way, and the parts of the server core it may use.
import type { Implementation, Result } from '../../protocol/index.js';
import type { Catalog } from '../catalog/catalog.js';
import type { Logger } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import type { RoundGuard } from '../round/guard.js';
import type { Call } from '../round/round.js';
import type { RoundRunner } from '../round/runner.js';
import type { TaskService } from '../tasks/task-service.js';

export type { Call };

/** The server core as the methods see it. */
export interface Core {
  /** Where every method finds its tools, prompts and resources, for the caller of the request. */
  catalog: Catalog;
  /** Runs tools/call, prompts/get and resources/read rounds: every guard, observer and the state codec. */
  rounds: RoundRunner;
  serverInfo: Implementation;
  instructions: string | undefined;
  pageSize: number;
  /** Cache hints on list results, discovery and resources/read (server/utilities/caching.mdx). */
  listTtlMs: number;
  handlerTimeoutMs: number;
  logger: Logger;
  /** The round guards, for what runs author code outside the round pipeline (completers): they screen it too. */
  guards: readonly RoundGuard[];
  /** How long a guard's promise may take before what it guards fails closed. */
  hookTimeoutMs: number;
  /** The tasks extension: undefined when the server offers no tasks. */
  tasks: TaskService | undefined;
}

export type MethodHandler = (core: Core, call: Call) => MaybePromise<Result>;
