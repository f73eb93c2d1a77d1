// AnyMrtrError has one class per code: the compiler checks that switching on `code` narrows every code of
// MRTR_ERROR_CODES to exactly one member of the union; the docs name no other code; src/ makes no bare MrtrError.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { SessionExpired } from '../../src/client/index.js';
import type { AnyMrtrError } from '../../src/index.js';
import { type InvalidOptionError, MRTR_ERROR_CODES, type MrtrErrorCode } from '../../src/protocol/index.js';

/** The members of AnyMrtrError a `case C:` keeps: those whose `code` can be C. */
type NarrowsTo<C extends MrtrErrorCode> = AnyMrtrError extends infer E
  ? E extends AnyMrtrError
    ? C extends E['code']
      ? E
      : never
    : never
  : never;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type HowMany<T> = [T] extends [never] ? 'none' : [T] extends [Intersection<T>] ? 'one' : 'two or more';
/** Every code that does not narrow to exactly one class, with how many it narrows to: `never` when all do. */
type NotOneClass = {
  [C in MrtrErrorCode]: HowMany<NarrowsTo<C>> extends 'one' ? never : [C, HowMany<NarrowsTo<C>>];
}[MrtrErrorCode];

const root = join(import.meta.dirname, '../..');
const filesUnder = (dir: string, ext: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(ext))
    .map((f) => join(dir, f));

describe('AnyMrtrError', () => {
  it('covers every code of MRTR_ERROR_CODES, and no other', () => {
    expectTypeOf<AnyMrtrError['code']>().toEqualTypeOf<MrtrErrorCode>();
    expectTypeOf<(typeof MRTR_ERROR_CODES)[number]>().toEqualTypeOf<AnyMrtrError['code']>();
  });

  it('narrows each code to exactly one class', () => {
    expectTypeOf<NotOneClass>().toBeNever();
    expectTypeOf<NarrowsTo<'ERR_SESSION_EXPIRED'>>().toEqualTypeOf<SessionExpired>();
    expectTypeOf<NarrowsTo<'ERR_INVALID_OPTION'>>().toEqualTypeOf<InvalidOptionError>();
  });

  it('a switch on code reaches the class’s own fields', () => {
    const status = (e: AnyMrtrError): number | string | undefined => {
      switch (e.code) {
        case 'ERR_AUTH_INVALID_TOKEN':
          return e.status;
        case 'ERR_TRANSPORT':
          return e.httpStatus;
        case 'ERR_WEBHOOK_REFUSED':
          return e.reason;
        default:
          return undefined;
      }
    };
    expect(status).toBeTypeOf('function');
  });

  it('every code the docs name is one of MRTR_ERROR_CODES', () => {
    const named = new Set<string>();
    for (const file of filesUnder(join(root, 'docs'), '.md'))
      for (const m of readFileSync(file, 'utf8').matchAll(/\bERR_[A-Z_]+[A-Z]\b/g)) named.add(m[0]);
    // The scan must find codes at all (docs/architecture.md and the pages name several), or the check says nothing.
    expect(named.size).toBeGreaterThan(5);
    expect([...named].filter((c) => !(MRTR_ERROR_CODES as readonly string[]).includes(c))).toEqual([]);
  });

  it('src/ makes no bare MrtrError: each is made as its code’s class', () => {
    const bare = filesUnder(join(root, 'src'), '.ts')
      .filter((file) => /\bnew MrtrError\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(bare).toEqual([]);
  });
});
