// What every method handler gets: the request on its way, and the parts of the server core it may use.
import type { Implementation, Result } from '../../protocol/index.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolEntry } from '../catalog/entries.js';
import type { Logger } from '../environment.js';
import type { MaybePromise } from '../maybe-async.js';
import type { RoundGuard } from '../round/guard.js';
import type { Call as RoundCall } from '../round/round.js';
import type { RoundRunner } from '../round/runner.js';
import type { TaskService } from '../tasks/task-service.js';

/** One request on its way to its method: the round's call, and the tool its front already found, if any. */
export interface Call extends RoundCall {
  /** The tools/call target the HTTP front resolved for its header parameters: the method does not look it up again. */
  found?: FoundTool | undefined;
}

/** A tool name as one caller found it: its entry, or undefined when the caller has no tool of that name. */
export interface FoundTool {
  readonly name: string;
  readonly entry: ToolEntry | undefined;
}

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
