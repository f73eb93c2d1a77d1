// What an author writes to serve a tool, a prompt or a resource: the options, the handlers and the results they
// return. Shared by the registry and by every catalog that builds entries (catalog/entries.ts).

import type { z } from 'zod';
import type {
  ContentBlock,
  JsonObject,
  PromptArgument,
  PromptMessage,
  ResourceContents,
  ToolAnnotations,
} from '../protocol/index.js';
import type { InputRequired, RequestContext } from './context.js';
import type { ArgumentSchema } from './schema-input.js';

export type Awaitable<T> = T | Promise<T>;

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: JsonObject;
  isError?: boolean;
  _meta?: JsonObject;
}
export interface PromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: JsonObject;
}
export interface ResourceResult {
  contents: ResourceContents[];
  _meta?: JsonObject;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : Record<string, unknown>;

/** Options shared by everything that can answer input_required. */
export interface HandlerOptions {
  /**
   * Accept `inputResponses` that arrive without a `requestState` (the spec's plain form). Off by default: then only
   * answers to keys a sealed previous round asked for reach the handler, so a client cannot answer a question
   * the server never asked. Turn it on only for handlers whose answers need no such proof.
   */
  unsealedAnswers?: boolean;
  /** Most input_required rounds one call may take (default: the server's maxRounds). */
  maxRounds?: number;
  /** How long a sealed requestState stays valid (default 10 minutes). */
  stateTtlMs?: number;
  /**
   * How long one round of this handler may run (default: the server's handlerTimeoutMs); a prompt's or template's
   * completers run under the same limit. On expiry the request is answered at once (a tool gets an isError result,
   * others -32603) and the handler's ctx.signal aborts with a HandlerTimeoutError.
   */
  timeoutMs?: number;
  /**
   * OAuth scopes a caller's token must carry (scope implications of the server's `auth` followed), checked on every
   * round before the requestState is opened. A caller without them gets HTTP 403 `insufficient_scope` naming them
   * all, so its client can step up. A server without `auth` has no scopes to grant: such a handler refuses everyone.
   */
  requiredScopes?: readonly string[];
  /**
   * Answer fields (and argument fields) whose values never reach an observer: the audit trail records each as
   * redacted, with a keyed digest so that equal values still correlate. Names a form field (`password`) or an
   * inputRequests key (the whole answer).
   */
  sensitive?: readonly string[];
}

/** Whether a tool may run as a task (the tasks extension): see docs/tasks.md. */
export type TaskSupport = 'optional' | 'required';

export interface ToolTaskOptions {
  /** optional: a task when the client declared the extension, a plain call otherwise; required: only as a task. */
  support: TaskSupport;
  /**
   * call (default): the call becomes a task before the handler runs. handler: the handler's questions go as MRTR
   * rounds until it calls `ctx.startTask()`: input gathered first, the long work in the task.
   */
  start?: 'call' | 'handler';
  /** How long the task is kept from its creation (default: the server's `tasks.ttlMs`). */
  ttlMs?: number;
}

export interface ToolOptions<S extends ArgumentSchema | undefined> extends HandlerOptions {
  name: string;
  /**
   * Run the call as a task (the tasks extension) when the client declared it: `'optional'`, `'required'` (a client
   * that did not declare it gets -32021), or the long form. The client polls tasks/get and answers questions with
   * tasks/update; every round still runs through the pipeline.
   */
  task?: TaskSupport | ToolTaskOptions;
  title?: string;
  description?: string;
  input?: S;
  output?: JsonObject;
  annotations?: ToolAnnotations;
  _meta?: JsonObject;
}
export type ToolHandler<S> = (args: Infer<S>, ctx: RequestContext) => Awaitable<ToolResult | InputRequired>;

export interface PromptOptions extends HandlerOptions {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  _meta?: JsonObject;
}
export type PromptHandler = (
  args: Record<string, string>,
  ctx: RequestContext,
) => Awaitable<PromptResult | InputRequired>;

export type ResourceHandler = (
  uri: string,
  ctx: RequestContext,
  variables: Record<string, string>,
) => Awaitable<ResourceResult | InputRequired>;

/** Suggest completions for one argument. Return at most 100 values. */
export type CompletionHandler = (
  value: string,
  context: Record<string, string>,
) => Awaitable<{ values: string[]; total?: number; hasMore?: boolean }>;
