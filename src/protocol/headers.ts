// Header value rules of streamable-http.mdx "Value Encoding": plain visible ASCII, or the Base64 sentinel form.

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
// Visible ASCII, space and tab (RFC 9110 field values); no leading/trailing whitespace.
const SAFE_PLAIN = /^[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?$/;

/** Decode a header value that may use the `=?base64?…?=` sentinel. Returns undefined when the value is malformed. */
export function decodeHeaderValue(raw: string): string | undefined {
  if (raw.startsWith(SENTINEL_PREFIX) && raw.endsWith(SENTINEL_SUFFIX) && raw.length >= 11) {
    const body = raw.slice(SENTINEL_PREFIX.length, raw.length - SENTINEL_SUFFIX.length);
    if (!BASE64.test(body) || body.length % 4 !== 0) return undefined;
    const bytes = Buffer.from(body, 'base64');
    // One encoding per value: non-zero padding bits (`YR==` for "a") would let two header texts mean one value.
    if (bytes.toString('base64') !== body) return undefined;
    const text = bytes.toString('utf8');
    // Reject invalid UTF-8 rather than comparing a replacement-character string against the body.
    if (!Buffer.from(text, 'utf8').equals(bytes)) return undefined;
    return text;
  }
  if (raw === '') return raw;
  if (!/^[\x20-\x7e\t]*$/.test(raw)) return undefined;
  return raw;
}

/** Encode a value for a header, using the sentinel when it is not plain safe ASCII or looks like a sentinel. */
export function encodeHeaderValue(value: string): string {
  // An empty value is sent empty (SEP-2243's encoding table: "" → `Mcp-Param-Name: `), not as an empty sentinel.
  if (value === '') return value;
  const looksLikeSentinel = value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX);
  if (SAFE_PLAIN.test(value) && !looksLikeSentinel) return value;
  return `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * The body field a request's Mcp-Name header mirrors (SEP-2243; SEP-2663 adds the tasks methods' taskId), or
 * undefined for methods that carry no name header.
 */
export function nameHeaderField(method: string): 'name' | 'uri' | 'taskId' | undefined {
  switch (method) {
    case 'tools/call':
    case 'prompts/get':
      return 'name';
    case 'resources/read':
      return 'uri';
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return 'taskId';
    default:
      return undefined;
  }
}
