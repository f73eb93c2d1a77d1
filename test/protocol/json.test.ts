// The shared JSON helpers: what counts as an object, and keys a peer chose treated as plain keys.
import { describe, expect, it } from 'vitest';
import { emptyRecord, isJsonObject, ownValue, withoutPrototypes } from '../../src/protocol/index.js';

const TRICKY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

describe('isJsonObject', () => {
  it.each([
    [{}, true],
    [JSON.parse('{"a":1}'), true],
    [Object.create(null), true],
    [[], false],
    [null, false],
    [undefined, false],
    ['{}', false],
    [0, false],
    [true, false],
  ])('%j → %s', (value, expected) => {
    expect(isJsonObject(value)).toBe(expected);
  });
});

describe('ownValue', () => {
  it.each(TRICKY_KEYS)('reads %s only when the object holds it', (key) => {
    expect(ownValue({}, key)).toBeUndefined();
    const parsed = JSON.parse(`{${JSON.stringify(key)}: "plain"}`);
    expect(ownValue(parsed, key)).toBe('plain');
  });
});

describe('emptyRecord', () => {
  it.each(TRICKY_KEYS)('stores %s as a plain key that survives JSON', (key) => {
    const r = emptyRecord<string>();
    expect(r[key]).toBeUndefined();
    r[key] = 'v';
    expect(Object.getPrototypeOf(r)).toBeNull();
    expect(Object.keys(r)).toEqual([key]);
    expect(JSON.parse(JSON.stringify(r))).toEqual(JSON.parse(`{${JSON.stringify(key)}: "v"}`));
  });
});

describe('withoutPrototypes', () => {
  it('copies every object as a record of its own keys: an absent member reads as absent', () => {
    const parsed = JSON.parse('{"__proto__":{"a":1},"list":[{"b":2},"x"],"inner":{"name":"n"}}');
    const copy = withoutPrototypes(parsed) as Record<string, Record<string, unknown>>;
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect(Object.getPrototypeOf(copy)).toBeNull();
    expect(Object.getPrototypeOf(copy.inner)).toBeNull();
    expect(Object.getPrototypeOf((copy.list as unknown as object[])[0])).toBeNull();
    for (const key of TRICKY_KEYS.slice(1)) expect(copy.inner![key]).toBeUndefined();
    // `__proto__` stays a plain key with its value; the copy's prototype is untouched.
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ a: 1 });
    expect(copy.a).toBeUndefined();
    expect(parsed.inner.constructor).toBe(Object);
  });

  it('leaves values that are not objects as they are', () => {
    for (const v of ['s', 1, true, null, undefined]) expect(withoutPrototypes(v)).toBe(v);
  });

  it('stops copying at maxDepth: deeper values are kept as they are, and no nesting overflows the stack', () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 100_000; i++) deep = { nested: deep };
    const copy = withoutPrototypes(deep, 2) as Record<string, Record<string, unknown>>;
    expect(Object.getPrototypeOf(copy)).toBeNull();
    expect(Object.getPrototypeOf(copy.nested)).toBeNull();
    expect(copy.nested!.nested).toBe((deep.nested as Record<string, unknown>).nested);
    expect(() => withoutPrototypes(deep)).not.toThrow();
  });
});
