// ajv-formats' formats that a hostile string can make slow, replaced by linear-time checks. Of its regular
// expressions only `url`'s backtracks badly (`\S+(?::\S*)?@` is quadratic: 80,000 colons took 23 s); every other
// format stays linear on the inputs that attack such expressions (test/protocol/linear-regexp.test.ts).
import { RE2JS } from 're2js';

// JavaScript's `\S`: RE2's is ASCII-only.
const NOT_SPACE =
  '[^\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}]';
const OCTET = '(?:\\d{1,2}|1\\d\\d|2[0-4]\\d|25[0-5])';
const LAST_OCTET = '(?:[1-9]\\d?|1\\d\\d|2[0-4]\\d|25[0-4])';
// ajv-formats refuses private addresses with lookaheads, which RE2 lacks; the same addresses are left out here by
// spelling out the octets that remain: a first octet other than 10, 127, 169, 172 and 192 …
const PUBLIC_FIRST =
  '(?:[1-9]|1[1-9]|[2-9]\\d|1[013458]\\d|12[0-689]|16[0-8]|17[013-9]|19[013-9]|2[01]\\d|22[0-3])';
// … or 169 but not 169.254, 172 but not 172.16–31, 192 but not 192.168.
const PUBLIC_PREFIX = `(?:${PUBLIC_FIRST}\\.${OCTET}|169\\.(?:\\d{1,2}|1\\d\\d|2[0-4]\\d|25[0-35])|172\\.(?:\\d|0\\d|1[0-5]|3[2-9]|[4-9]\\d|1\\d\\d|2[0-4]\\d|25[0-5])|192\\.(?:\\d{1,2}|1[0-57-9]\\d|16[0-79]|2[0-4]\\d|25[0-5]))`;
const PUBLIC_IPV4 = `${PUBLIC_PREFIX}\\.${OCTET}\\.${LAST_OCTET}`;
const LABEL = '(?:[a-z0-9\\x{A1}-\\x{FFFF}]+-)*[a-z0-9\\x{A1}-\\x{FFFF}]+';
const HOST = `${LABEL}(?:\\.${LABEL})*\\.[a-z\\x{A1}-\\x{FFFF}]{2,}`;

/** ajv-formats' `url` (dperini's expression) with the same meaning, in RE2's syntax. */
const URL = RE2JS.compile(
  `(?i)^(?:https?|ftp)://(?:${NOT_SPACE}+@)?(?:${PUBLIC_IPV4}|${HOST})(?::\\d{2,5})?(?:/${NOT_SPACE}*)?$`,
);

/** The formats to add after ajv-formats, over its own of the same name. */
export const LINEAR_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  url: (value) => URL.testExact(value),
};
