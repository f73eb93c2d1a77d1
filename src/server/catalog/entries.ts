// What a catalog holds for each tool, prompt, resource and resource template — everything the methods need to list
// it and to run it through the round pipeline — and the builders that make one from an author's options and handler.
// The registry builds its entries here; so can any other catalog (a gateway's, whose handlers call upstream).

import type {
  JsonObject,
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ToolDefinition,
} from '../../protocol/index.js';
import { InvalidOptionError, registrationError } from '../errors.js';
import type {
  CompletionHandler,
  HandlerOptions,
  PromptHandler,
  PromptOptions,
  ResourceHandler,
  TaskSupport,
  ToolHandler,
  ToolOptions,
  ToolTaskOptions,
} from '../handlers.js';
import { type HeaderParam, headerParamsOf } from '../header-params.js';
import { checkIntegerOption, MAX_TIMER_MS } from '../option-checks.js';
import {
  type ArgumentSchema,
  type CompiledArguments,
  compileArguments,
  compileOutput,
} from '../schema-input.js';
import { UriTemplate } from '../uri-template.js';

/** A prompt's or template's completers, by argument name (a Map, or anything that answers `get`). */
export interface Completers {
  get(argument: string): CompletionHandler | undefined;
}

export interface ToolEntry {
  /** What tools/list shows. */
  readonly definition: ToolDefinition;
  readonly mrtr: HandlerOptions;
  /** Where arguments are mirrored into `Mcp-Param-*` headers (checked by the HTTP transport). */
  readonly headerParams: HeaderParam[];
  /** The compiled argument check the handler's arguments pass first. */
  readonly args: CompiledArguments;
  /** Checks structuredContent against the outputSchema; returns a problem, or undefined when it conforms. */
  readonly checkOutput: ((structured: unknown) => string | undefined) | undefined;
  readonly handler: ToolHandler<ArgumentSchema | undefined>;
  /** Whether and how the call may run as a task; undefined: never. */
  readonly task?: ToolTaskOptions;
  /**
   * How the call's arguments are prepared, once per round, before the state binds them and the guards and the handler
   * read them (a gateway's one spelling per path). A throw answers the call with a tool error naming the problem.
   */
  readonly prepareArguments?: (args: JsonObject) => JsonObject;
}
export interface PromptEntry {
  readonly definition: PromptDefinition;
  readonly mrtr: HandlerOptions;
  readonly handler: PromptHandler;
  readonly completions: Completers;
}
export interface ResourceEntry {
  readonly definition: ResourceDefinition;
  readonly mrtr: HandlerOptions;
  readonly handler: ResourceHandler;
}
export interface ResourceTemplateEntry {
  readonly definition: ResourceTemplateDefinition;
  readonly mrtr: HandlerOptions;
  /** The compiled template, which matches a URI and gives its variables. */
  readonly template: UriTemplate;
  readonly handler: ResourceHandler;
  readonly completions: Completers;
}
/** What resources/read runs for one URI: a fixed resource (no variables) or a template's match. */
export interface FoundResource {
  readonly mrtr: HandlerOptions;
  readonly handler: ResourceHandler;
  readonly variables: Record<string, string>;
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
const SERVER_ONLY_OPTIONS: ReadonlySet<string> = new Set([...MRTR_OPTION_KEYS, 'complete', 'task']);
type ServerOnlyOption = keyof HandlerOptions | 'complete' | 'task';

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

/** A tool's entry: its listed definition, compiled argument and output checks, header bindings and handler. */
export function toolEntry<S extends ArgumentSchema | undefined>(
  options: ToolOptions<S>,
  handler: ToolHandler<S>,
): ToolEntry {
  const args = compileArguments(options.input, `tool ${options.name}`);
  const definition: ToolDefinition = { name: options.name, inputSchema: args.jsonSchema };
  if (options.title !== undefined) definition.title = options.title;
  if (options.description !== undefined) definition.description = options.description;
  if (options.output !== undefined) definition.outputSchema = options.output;
  if (options.annotations !== undefined) definition.annotations = options.annotations;
  if (options._meta !== undefined) definition._meta = options._meta;
  return {
    definition,
    args,
    checkOutput: options.output ? compileOutput(options.output, `tool ${options.name}`) : undefined,
    mrtr: mrtrOptionsOf(options),
    headerParams: headerParamsOf(args.jsonSchema, `tool ${options.name}`),
    handler: handler as ToolHandler<ArgumentSchema | undefined>,
    ...(options.task === undefined ? {} : { task: taskOptionsOf(options.task, options.name) }),
  };
}

/** The task option in its long form, checked: a typo must not quietly make a tool never (or always) a task. */
function taskOptionsOf(task: TaskSupport | ToolTaskOptions, tool: string): ToolTaskOptions {
  const o: ToolTaskOptions = typeof task === 'string' ? { support: task } : task;
  if (o === null || typeof o !== 'object' || (o.support !== 'optional' && o.support !== 'required'))
    throw new InvalidOptionError(
      `tool ${tool}: task must be 'optional', 'required' or { support, start?, ttlMs? }`,
    );
  if (o.start !== undefined && o.start !== 'call' && o.start !== 'handler')
    throw new InvalidOptionError(`tool ${tool}: task.start must be 'call' or 'handler'`);
  checkIntegerOption(`tool ${tool}`, 'task.ttlMs', o.ttlMs, { max: 0xffff_ffff });
  return { ...o };
}

export function promptEntry(
  options: PromptOptions & { complete?: Record<string, CompletionHandler> },
  handler: PromptHandler,
): PromptEntry {
  return {
    definition: listedDefinition(options),
    handler,
    mrtr: mrtrOptionsOf(options),
    completions: new Map(Object.entries(options.complete ?? {})),
  };
}

export function resourceEntry(
  options: ResourceDefinition & HandlerOptions,
  handler: ResourceHandler,
): ResourceEntry {
  return { definition: listedDefinition(options), handler, mrtr: mrtrOptionsOf(options) };
}

export function resourceTemplateEntry(
  options: ResourceTemplateDefinition & HandlerOptions & { complete?: Record<string, CompletionHandler> },
  handler: ResourceHandler,
): ResourceTemplateEntry {
  const definition = listedDefinition(options);
  return {
    definition,
    mrtr: mrtrOptionsOf(options),
    template: new UriTemplate(definition.uriTemplate),
    handler,
    completions: new Map(Object.entries(options.complete ?? {})),
  };
}
