// The shared JSON helpers: what counts as an object, and keys a peer chose treated as plain keys.
import { describe, expect, it } from 'vitest';
import { emptyRecord, isJsonObject, ownValue } from '../../src/protocol/index.js';

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
