// A type check of a policy condition at load, before any call depends on it. @bufbuild/cel 0.6 parses, plans and
// evaluates, but its own checker handles only constants and identifiers and is not exported; so this walks the
// parsed expression itself, against the same function table the evaluator will use (env.funcs): every variable must
// be one the gateway binds, every field of `caller` and `tool` must exist, every function and method must have an
// overload for the argument types, and the whole must give a bool. `args` is a map of dyn (arguments are the
// caller's), so what depends on argument types is left to evaluation, where a mismatch fails closed.
import type { CelEnv, CelType, parse } from '@bufbuild/cel';

import { GatewayConfigError } from '../config-errors.js';

type ParsedExpr = ReturnType<typeof parse>;
type Expr = ParsedExpr['expr'];
type ComprehensionKind = Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];
type CallKind = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];

type ScalarName = 'bool' | 'int' | 'uint' | 'double' | 'string' | 'bytes' | 'null_type' | 'type';

/** A static type; `record` is a map whose fields are known (caller, tool), so a misspelt field is found at load. */
export type StaticType =
  | { readonly kind: 'dyn' }
  | { readonly kind: 'scalar'; readonly name: ScalarName }
  | { readonly kind: 'list'; readonly elem: StaticType }
  | { readonly kind: 'map'; readonly key: StaticType; readonly value: StaticType }
  | { readonly kind: 'object'; readonly name: string }
  | { readonly kind: 'record'; readonly name: string; readonly fields: Readonly<Record<string, StaticType>> };

export const DYN: StaticType = { kind: 'dyn' };
const scalar = (name: ScalarName): StaticType => ({ kind: 'scalar', name });
const BOOL = scalar('bool');
const INT = scalar('int');
const STRING = scalar('string');
const TYPE = scalar('type');
export const listOf = (elem: StaticType): StaticType => ({ kind: 'list', elem });
export const mapOf = (key: StaticType, value: StaticType): StaticType => ({ kind: 'map', key, value });
export const record = (name: string, fields: Record<string, StaticType>): StaticType => ({
  kind: 'record',
  name,
  fields,
});
export { STRING as STRING_TYPE };

/** Names that denote types as values, as in `type(args.n) == int`. */
const TYPE_NAMES = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'string',
  'bytes',
  'list',
  'map',
  'null_type',
  'type',
]);

export function typeName(t: StaticType): string {
  switch (t.kind) {
    case 'dyn':
      return 'dyn';
    case 'scalar':
      return t.name;
    case 'list':
      return `list(${typeName(t.elem)})`;
    case 'map':
      return `map(${typeName(t.key)}, ${typeName(t.value)})`;
    case 'object':
      return t.name;
    case 'record':
      return t.name;
  }
}

function fromCelType(t: CelType): StaticType {
  switch (t.kind) {
    case 'scalar':
      return t.name === 'dyn' ? DYN : scalar(t.name as ScalarName);
    case 'list':
      return listOf(fromCelType(t.element));
    case 'map':
      return mapOf(fromCelType(t.key), fromCelType(t.value));
    case 'object':
      return { kind: 'object', name: t.name };
  }
}

const same = (a: StaticType, b: StaticType): boolean => typeName(a) === typeName(b);
const join = (a: StaticType, b: StaticType): StaticType => (same(a, b) ? a : DYN);

/** Whether a value of type `actual` may be passed where `param` is expected. */
function assignable(actual: StaticType, param: StaticType): boolean {
  if (actual.kind === 'dyn' || param.kind === 'dyn') return true;
  switch (param.kind) {
    case 'scalar':
      return actual.kind === 'scalar' && actual.name === param.name;
    case 'list':
      return actual.kind === 'list' && assignable(actual.elem, param.elem);
    case 'map':
      if (actual.kind === 'record') return assignable(STRING, param.key);
      return (
        actual.kind === 'map' && assignable(actual.key, param.key) && assignable(actual.value, param.value)
      );
    case 'object':
      return actual.kind === 'object' && actual.name === param.name;
    case 'record':
      return actual.kind === 'record' && actual.name === param.name;
  }
}

/** A condition CEL refuses to run: the reason, as CEL would put it. */
export class ConditionTypeError extends GatewayConfigError {
  override readonly name: string = 'ConditionTypeError';
}

const fail = (message: string): never => {
  throw new ConditionTypeError(message);
};

/** The identifier chain `a.b.c` an expression spells, or undefined when it is anything else. */
function qualifiedName(expr: Expr | undefined): string | undefined {
  if (!expr) return undefined;
  if (expr.exprKind.case === 'identExpr') return expr.exprKind.value.name;
  if (expr.exprKind.case === 'selectExpr' && !expr.exprKind.value.testOnly) {
    const operand = qualifiedName(expr.exprKind.value.operand);
    return operand === undefined ? undefined : `${operand}.${expr.exprKind.value.field}`;
  }
  return undefined;
}

export class ConditionChecker {
  #scopes: Map<string, StaticType>[] = [];

  constructor(
    private readonly env: CelEnv,
    private readonly variables: Readonly<Record<string, StaticType>>,
  ) {}

  /** The type `expr` gives, or a ConditionTypeError saying what CEL cannot run. */
  check(expr: Expr | undefined): StaticType {
    if (!expr) return fail('empty expression');
    const kind = expr.exprKind;
    switch (kind.case) {
      case 'constExpr':
        return this.#constant(kind.value.constantKind.case);
      case 'identExpr':
        return this.#ident(kind.value.name);
      case 'selectExpr':
        return this.#select(this.check(kind.value.operand), kind.value.field, kind.value.testOnly);
      case 'callExpr':
        return this.#call(kind.value);
      case 'listExpr': {
        if (kind.value.optionalIndices.length > 0) fail('optional list elements are not supported');
        const elems = kind.value.elements.map((e) => this.check(e));
        return listOf(elems.reduce(join, elems[0] ?? DYN));
      }
      case 'structExpr': {
        if (kind.value.messageName !== '')
          fail(`message types are not available (${kind.value.messageName})`);
        let key: StaticType | undefined;
        let value: StaticType | undefined;
        for (const entry of kind.value.entries) {
          if (entry.optionalEntry) fail('optional map entries are not supported');
          if (entry.keyKind.case !== 'mapKey') return fail('message fields are not available');
          const k = this.check(entry.keyKind.value);
          const v = this.check(entry.value);
          key = key ? join(key, k) : k;
          value = value ? join(value, v) : v;
        }
        return mapOf(key ?? DYN, value ?? DYN);
      }
      case 'comprehensionExpr':
        return this.#comprehension(kind.value);
      default:
        return fail('unsupported expression');
    }
  }

  #constant(kind: string | undefined): StaticType {
    switch (kind) {
      case 'boolValue':
        return BOOL;
      case 'int64Value':
        return INT;
      case 'uint64Value':
        return scalar('uint');
      case 'doubleValue':
        return scalar('double');
      case 'stringValue':
        return STRING;
      case 'bytesValue':
        return scalar('bytes');
      case 'nullValue':
        return scalar('null_type');
      default:
        return fail(`unsupported constant (${kind})`);
    }
  }

  #ident(name: string): StaticType {
    for (let i = this.#scopes.length - 1; i >= 0; i--) {
      const local = this.#scopes[i]?.get(name);
      if (local) return local;
    }
    const global = this.variables[name];
    if (global) return global;
    if (TYPE_NAMES.has(name)) return TYPE;
    return fail(
      `undeclared reference to '${name}' (the variables are ${Object.keys(this.variables).join(', ')})`,
    );
  }

  #select(operand: StaticType, field: string, testOnly: boolean): StaticType {
    switch (operand.kind) {
      case 'dyn':
        return testOnly ? BOOL : DYN;
      case 'map':
        if (!assignable(STRING, operand.key))
          fail(`cannot select field '${field}' from ${typeName(operand)}`);
        return testOnly ? BOOL : operand.value;
      case 'record': {
        const type = operand.fields[field];
        if (!type)
          return fail(
            `${operand.name} has no field '${field}' (it has ${Object.keys(operand.fields).join(', ')})`,
          );
        return testOnly ? BOOL : type;
      }
      default:
        return fail(`cannot select field '${field}' from ${typeName(operand)}`);
    }
  }

  #call(call: CallKind): StaticType {
    const name = call.function;
    switch (name) {
      case '_&&_':
      case '_||_':
        for (const arg of call.args) this.#expectBool(this.check(arg), name);
        return BOOL;
      case '@not_strictly_false':
      case '__not_strictly_false__':
        this.#expectBool(this.check(call.args[0]), name);
        return BOOL;
      case '_?_:_': {
        const [condition, ifTrue, ifFalse] = call.args;
        this.#expectBool(this.check(condition), '_?_:_');
        return join(this.check(ifTrue), this.check(ifFalse));
      }
      case '_[_]':
        return this.#index(this.check(call.args[0]), this.check(call.args[1]));
      case '_[?_]':
      case '_?._':
        return fail('optional field selection is not supported');
    }
    // `strings.quote(x)`: a namespaced function, not a method on a variable named `strings`.
    const qualified = call.target ? qualifiedName(call.target) : undefined;
    const rootName = qualified?.split('.')[0];
    if (qualified !== undefined && rootName !== undefined && !this.#declared(rootName)) {
      const group = this.env.funcs.find(`${qualified}.${name}`);
      if (group)
        return this.#overload(
          `${qualified}.${name}`,
          undefined,
          call.args.map((a) => this.check(a)),
        );
    }
    const target = call.target ? this.check(call.target) : undefined;
    return this.#overload(
      name,
      target,
      call.args.map((a) => this.check(a)),
    );
  }

  #declared(name: string): boolean {
    return this.#scopes.some((s) => s.has(name)) || name in this.variables;
  }

  #overload(name: string, target: StaticType | undefined, args: StaticType[]): StaticType {
    const group = this.env.funcs.find(name);
    const shown = (n: string) => n.replace(/^_(.+)_$/, '$1').replace(/^@/, '');
    if (!group) return fail(`undeclared reference to function '${shown(name)}'`);
    const results: StaticType[] = [];
    for (const func of group) {
      if ((func.target === undefined) !== (target === undefined)) continue;
      if (func.arguments.length !== args.length) continue;
      if (target && func.target && !assignable(target, fromCelType(func.target))) continue;
      if (!args.every((arg, i) => assignable(arg, fromCelType(func.arguments[i] as CelType)))) continue;
      results.push(fromCelType(func.result));
    }
    if (results.length === 0) {
      const applied = `${target ? `${typeName(target)}.` : ''}(${args.map(typeName).join(', ')})`;
      return fail(`found no matching overload for '${shown(name)}' applied to '${applied}'`);
    }
    return results.reduce(join);
  }

  #index(operand: StaticType, index: StaticType): StaticType {
    switch (operand.kind) {
      case 'dyn':
        return DYN;
      case 'list':
        if (!assignable(index, INT) && !assignable(index, scalar('uint')))
          fail(`a list index must be an int, not ${typeName(index)}`);
        return operand.elem;
      case 'map':
        if (!assignable(index, operand.key))
          fail(`a key of ${typeName(operand)} cannot be ${typeName(index)}`);
        return operand.value;
      case 'record':
        if (!assignable(index, STRING)) fail(`a key of ${operand.name} must be a string`);
        return DYN;
      default:
        return fail(`cannot index ${typeName(operand)}`);
    }
  }

  #comprehension(c: ComprehensionKind): StaticType {
    const range = this.check(c.iterRange);
    let first: StaticType;
    let second: StaticType;
    switch (range.kind) {
      case 'dyn':
        first = DYN;
        second = DYN;
        break;
      case 'list':
        [first, second] = [range.elem, range.elem];
        if (c.iterVar2 !== '') first = INT;
        break;
      case 'map':
        [first, second] = [range.key, range.value];
        break;
      case 'record':
        [first, second] = [STRING, DYN];
        break;
      default:
        return fail(`cannot iterate over ${typeName(range)}`);
    }
    const accumulator = this.check(c.accuInit);
    const loop = new Map<string, StaticType>([
      [c.accuVar, accumulator],
      [c.iterVar, first],
    ]);
    if (c.iterVar2 !== '') loop.set(c.iterVar2, second);
    this.#scopes.push(loop);
    try {
      this.#expectBool(this.check(c.loopCondition), 'the loop condition');
      this.check(c.loopStep);
    } finally {
      this.#scopes.pop();
    }
    this.#scopes.push(new Map([[c.accuVar, accumulator]]));
    try {
      return this.check(c.result);
    } finally {
      this.#scopes.pop();
    }
  }

  #expectBool(t: StaticType, where: string): void {
    if (t.kind !== 'dyn' && !(t.kind === 'scalar' && t.name === 'bool'))
      fail(`${where.replace(/^_(.+)_$/, '$1')} needs a bool, not ${typeName(t)}`);
  }
}
