// A rule's `when`: a CEL expression over the call — `args` (its arguments, a map of dyn), `caller` ({subject,
// issuer, roles, scopes}) and `tool` ({upstream, name}). Parsed and type-checked at load; evaluated per call by a plan
// made once. `matches` is CEL's RE2 (linear time): an argument cannot make a condition's regular expression blow up.
// JSON numbers that are whole become CEL ints, so `args.count > 5`, `args.count == 5` and `args.count % 2 == 0` read
// as written; other numbers are doubles (CEL compares int and double as numbers).
import { type CelInput, celEnv, isCelError, parse, plan, unparse } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { InvalidArgumentError } from '../../protocol/index.js';
import { GatewayConfigError } from '../config-errors.js';
import { ConditionChecker, DYN, listOf, mapOf, record, STRING_TYPE, typeName } from './cel-check.js';
import { foldPathLiterals, type LiteralFold, literalsInNfc } from './literals.js';
import type { PolicyCaller, ToolRef } from './types.js';

const ENV = celEnv({ funcs: strings });

const VARIABLES = {
  args: mapOf(STRING_TYPE, DYN),
  caller: record('caller', {
    subject: STRING_TYPE,
    issuer: STRING_TYPE,
    roles: listOf(STRING_TYPE),
    scopes: listOf(STRING_TYPE),
  }),
  tool: record('tool', { upstream: STRING_TYPE, name: STRING_TYPE }),
};

/** Arguments nested deeper than this are refused (the condition fails closed) rather than walked. */
const MAX_ARGUMENT_DEPTH = 64;

/** What a condition reads, converted once per decision and shared by every rule's condition. */
export interface ConditionBindings {
  readonly vars: Record<string, CelInput>;
  /** Set when the arguments could not be converted: every condition then fails closed with this reason. */
  readonly argsError?: string;
}

export type ConditionResult =
  | { readonly ok: true; readonly value: boolean }
  | { readonly ok: false; readonly error: string };

export interface Condition {
  /** The expression as written. */
  readonly source: string;
  /** The expression as CEL prints it back (its literals in NFC): layout-free, for the policy digest. */
  readonly canonical: string;
  /** On a call to `upstream`: a case-insensitive one's condition has its path literals folded (literals.ts). */
  evaluate(bindings: ConditionBindings, upstream?: string): ConditionResult;
}

/** A `when` CEL cannot parse or would refuse to run; the message is CEL's reason. */
export class ConditionCompileError extends GatewayConfigError {
  override readonly name: string = 'ConditionCompileError';
}

/**
 * `folds` names the case-insensitive upstreams, each with how its paths are spelt: the condition gets a plan of its
 * own for each, its path literals folded.
 */
export function compileCondition(
  source: string,
  folds: ReadonlyMap<string, LiteralFold> = new Map(),
): Condition {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ConditionCompileError(`syntax error at ${message.replace(/^<input>:/, '')}`);
  }
  literalsInNfc(parsed.expr);
  let result: ReturnType<ConditionChecker['check']>;
  try {
    result = new ConditionChecker(ENV, VARIABLES).check(parsed.expr);
  } catch (error) {
    throw new ConditionCompileError(error instanceof Error ? error.message : String(error));
  }
  // dyn passes here (`args.confirmed` may well be a bool); a value that is not a bool fails closed when evaluated.
  if (result.kind !== 'dyn' && !(result.kind === 'scalar' && result.name === 'bool'))
    throw new ConditionCompileError(`a condition must give a bool, and this one gives ${typeName(result)}`);
  const run = plan(ENV, parsed);
  const folded = new Map(
    [...folds].map(([upstream, fold]) => {
      const copy = parse(source);
      literalsInNfc(copy.expr);
      foldPathLiterals(copy.expr, fold);
      return [upstream, plan(ENV, copy)] as const;
    }),
  );
  return {
    source,
    canonical: unparse(parsed),
    evaluate(bindings, upstream) {
      if (bindings.argsError !== undefined) return { ok: false, error: bindings.argsError };
      const runs = (upstream !== undefined && folded.get(upstream)) || run;
      let value: unknown;
      try {
        value = runs(bindings.vars);
      } catch (error) {
        // The evaluator is not supposed to throw; if it does, the condition is still undecided, and fails closed.
        return { ok: false, error: error instanceof Error ? error.message : String(error) };
      }
      if (isCelError(value) || value instanceof Error) return { ok: false, error: value.message };
      if (typeof value !== 'boolean') return { ok: false, error: `gave ${describeValue(value)}, not a bool` };
      return { ok: true, value };
    },
  };
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return 'an int';
  if (typeof value === 'number') return 'a double';
  if (typeof value === 'string') return 'a string';
  return 'a value';
}

/** Internal signal of toCel: arguments a condition cannot read (too deep, no JSON form). */
class ArgumentsTooDeep extends InvalidArgumentError {}

/** A JSON value as CEL input: objects as Maps (an argument named `constructor` is just a key), whole numbers as ints. */
function toCel(value: unknown, depth: number): CelInput {
  if (depth > MAX_ARGUMENT_DEPTH)
    throw new ArgumentsTooDeep(`arguments nested deeper than ${MAX_ARGUMENT_DEPTH}`);
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return value;
    case 'number':
      return Number.isSafeInteger(value) ? BigInt(value) : value;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((item) => toCel(item, depth + 1));
      const map = new Map<string, CelInput>();
      for (const [key, item] of Object.entries(value))
        if (item !== undefined) map.set(key, toCel(item, depth + 1));
      return map;
    }
    default:
      throw new ArgumentsTooDeep(`an argument of type ${typeof value} has no JSON form`);
  }
}

/** The variables of one decision: made once, read by every condition that decision evaluates. */
export function conditionBindings(
  caller: PolicyCaller,
  ref: ToolRef,
  args: Readonly<Record<string, unknown>>,
): ConditionBindings {
  const { vars } = listingBindings(caller, ref);
  try {
    return { vars: { ...vars, args: toCel(args, 0) } };
  } catch (error) {
    if (!(error instanceof ArgumentsTooDeep)) throw error;
    return { vars, argsError: error.message };
  }
}

/**
 * The variables known before any call: the caller and the tool, no `args`. A condition that gives a bool with these
 * gives that bool for every call (CEL lets an unbound `args` decide nothing: it is an error that `&&`/`||` absorb only
 * when the other side decides), so a listing can apply it; one that reads `args` gives an error here.
 */
export function listingBindings(caller: PolicyCaller, ref: ToolRef): ConditionBindings {
  const callerMap = new Map<string, CelInput>([
    ['subject', caller.subject],
    ['roles', [...caller.roles]],
    ['scopes', [...caller.scopes]],
  ]);
  if (caller.issuer !== undefined) callerMap.set('issuer', caller.issuer);
  const tool = new Map<string, CelInput>([
    ['upstream', ref.upstream],
    ['name', ref.tool],
  ]);
  return { vars: { caller: callerMap, tool } };
}
