// The server's catalogue: tools, prompts, resources, resource templates and completions, in registration order.

import type { z } from 'zod';
import type {
  ContentBlock,
  JsonObject,
  PromptArgument,
  PromptDefinition,
  PromptMessage,
  ResourceContents,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ToolAnnotations,
  ToolDefinition,
} from '../protocol/index.js';
import type { InputRequired, RequestContext } from './context.js';
import { InvalidOptionError, registrationError } from './errors.js';
import { type HeaderParam, headerParamsOf } from './header-params.js';
import { checkIntegerOption, MAX_TIMER_MS } from './option-checks.js';
import {
  type ArgumentSchema,
  type CompiledArguments,
  compileArguments,
  compileOutput,
} from './schema-input.js';
import { UriTemplate } from './uri-template.js';

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

/** Every HandlerOptions key, checked by the compiler: a new option cannot be forgotten here (and leak into lists). */
const MRTR_OPTION_KEYS = Object.keys({
  unsealedAnswers: true,
  maxRounds: true,
  stateTtlMs: true,
  timeoutMs: true,
  requiredScopes: true,
  sensitive: true,
} satisfies Record<keyof HandlerOptions, true>) as Array<keyof HandlerOptions>;

/** Registration options that configure the server and never appear in a listed definition. */
const SERVER_ONLY_OPTIONS: ReadonlySet<string> = new Set([...MRTR_OPTION_KEYS, 'complete']);
type ServerOnlyOption = keyof HandlerOptions | 'complete';

/** The definition clients see: the registration options minus the server-only ones. */
function listedDefinition<T extends object>(options: T): Omit<T, ServerOnlyOption> {
  const definition: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    if (!SERVER_ONLY_OPTIONS.has(key)) definition[key] = value;
  }
  return definition as Omit<T, ServerOnlyOption>;
}

function mrtrOptionsOf(o: HandlerOptions): HandlerOptions {
  checkIntegerOption('handler options', 'timeoutMs', o.timeoutMs, { max: MAX_TIMER_MS });
  checkIntegerOption('handler options', 'maxRounds', o.maxRounds, { max: 1000 });
  checkIntegerOption('handler options', 'stateTtlMs', o.stateTtlMs, { max: 0xffff_ffff });
  const scopes = o.requiredScopes;
  if (
    scopes !== undefined &&
    (!Array.isArray(scopes) ||
      scopes.some((s) => typeof s !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s)))
  )
    throw registrationError('requiredScopes must be an array of OAuth scope tokens (no spaces or quotes)');
  if (
    o.sensitive !== undefined &&
    !(Array.isArray(o.sensitive) && o.sensitive.every((name) => typeof name === 'string' && name !== ''))
  )
    throw new InvalidOptionError('handler options: sensitive must be a list of field names');
  const out: Record<string, unknown> = {};
  for (const key of MRTR_OPTION_KEYS) if (o[key] !== undefined) out[key] = o[key];
  return out as HandlerOptions;
}

export interface ToolOptions<S extends ArgumentSchema | undefined> extends HandlerOptions {
  name: string;
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

export interface RegisteredTool {
  definition: ToolDefinition;
  mrtr: HandlerOptions;
  headerParams: HeaderParam[];
  args: CompiledArguments;
  /** Checks structuredContent against the outputSchema; returns a problem, or undefined when it conforms. */
  checkOutput: ((structured: unknown) => string | undefined) | undefined;
  handler: ToolHandler<ArgumentSchema | undefined>;
}
export interface RegisteredPrompt {
  definition: PromptDefinition;
  mrtr: HandlerOptions;
  handler: PromptHandler;
  completions: Map<string, CompletionHandler>;
}
export interface RegisteredResource {
  definition: ResourceDefinition;
  mrtr: HandlerOptions;
  handler: ResourceHandler;
}
export interface RegisteredTemplate {
  definition: ResourceTemplateDefinition;
  mrtr: HandlerOptions;
  template: UriTemplate;
  handler: ResourceHandler;
  completions: Map<string, CompletionHandler>;
}

export class Registry {
  readonly tools = new Map<string, RegisteredTool>();
  readonly prompts = new Map<string, RegisteredPrompt>();
  readonly resources = new Map<string, RegisteredResource>();
  readonly templates: RegisteredTemplate[] = [];

  addTool<S extends ArgumentSchema | undefined>(options: ToolOptions<S>, handler: ToolHandler<S>): void {
    if (this.tools.has(options.name)) throw registrationError(`tool ${options.name} is already registered`);
    const args = compileArguments(options.input, `tool ${options.name}`);
    const definition: ToolDefinition = { name: options.name, inputSchema: args.jsonSchema };
    if (options.title !== undefined) definition.title = options.title;
    if (options.description !== undefined) definition.description = options.description;
    if (options.output !== undefined) definition.outputSchema = options.output;
    if (options.annotations !== undefined) definition.annotations = options.annotations;
    if (options._meta !== undefined) definition._meta = options._meta;
    this.tools.set(options.name, {
      definition,
      args,
      checkOutput: options.output ? compileOutput(options.output, `tool ${options.name}`) : undefined,
      mrtr: mrtrOptionsOf(options),
      headerParams: headerParamsOf(args.jsonSchema, `tool ${options.name}`),
      handler: handler as ToolHandler<ArgumentSchema | undefined>,
    });
  }

  addPrompt(
    options: PromptOptions & { complete?: Record<string, CompletionHandler> },
    handler: PromptHandler,
  ): void {
    if (this.prompts.has(options.name))
      throw registrationError(`prompt ${options.name} is already registered`);
    const { complete } = options;
    this.prompts.set(options.name, {
      definition: listedDefinition(options),
      handler,
      mrtr: mrtrOptionsOf(options),
      completions: new Map(Object.entries(complete ?? {})),
    });
  }

  addResource(options: ResourceDefinition & HandlerOptions, handler: ResourceHandler): void {
    const definition = listedDefinition(options);
    if (this.resources.has(definition.uri))
      throw registrationError(`resource ${definition.uri} is already registered`);
    this.resources.set(definition.uri, { definition, handler, mrtr: mrtrOptionsOf(options) });
  }

  addTemplate(
    options: ResourceTemplateDefinition & HandlerOptions & { complete?: Record<string, CompletionHandler> },
    handler: ResourceHandler,
  ): void {
    const { complete } = options;
    const definition = listedDefinition(options);
    this.templates.push({
      definition,
      mrtr: mrtrOptionsOf(options),
      template: new UriTemplate(definition.uriTemplate),
      handler,
      completions: new Map(Object.entries(complete ?? {})),
    });
  }

  /** Whether any handler declared requiredScopes (the server then adds the scope guard). */
  requiresScopes(): boolean {
    const all: Array<{ mrtr: HandlerOptions }> = [
      ...this.tools.values(),
      ...this.prompts.values(),
      ...this.resources.values(),
      ...this.templates,
    ];
    return all.some((entry) => (entry.mrtr.requiredScopes?.length ?? 0) > 0);
  }

  /** A fixed resource first, then the first template that matches. */
  findResource(
    uri: string,
  ): { handler: ResourceHandler; variables: Record<string, string>; mrtr: HandlerOptions } | undefined {
    const fixed = this.resources.get(uri);
    if (fixed) return { handler: fixed.handler, variables: {}, mrtr: fixed.mrtr };
    for (const t of this.templates) {
      const variables = t.template.match(uri);
      if (variables) return { handler: t.handler, variables, mrtr: t.mrtr };
    }
    return undefined;
  }
}
