// What a URL-mode elicitation's link really opens: the host as a browser resolves it (percent-encoding decoded,
// look-alike dots such as U+3002 mapped, IDNA applied), and the schemes that are never offered to a person.

export type LinkVerdict =
  | { ok: false; reason: string }
  | {
      ok: true;
      /** The link as the browser will load it (WHATWG-normalised). */
      href: string;
      /** The host the browser will contact, as it resolves it (punycode for international names). */
      host: string;
      warnings: string[];
    };

/** Loopback hosts, where plain http is what a local demo uses. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The host part exactly as written in the link (between `//` and the path), lower-cased, without user or port. */
function writtenHost(raw: string): string | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw.trim());
  if (!m?.[1]) return undefined;
  const authority = m[1].slice(m[1].lastIndexOf('@') + 1);
  const host = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority;
  return host.replace(/:\d*$/, '').toLowerCase();
}

/** Judge a link a server asks a person to open. Only http and https links are ever shown as something to open. */
export function inspectLink(raw: string): LinkVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'this is not a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    // javascript: runs code, data: carries a whole page, file: reads the disk: none is a page to sign in on.
    return {
      ok: false,
      reason: `${url.protocol.replace(':', '')}: links are never offered (only http and https)`,
    };
  }
  const warnings: string[] = [];
  const host = url.hostname;
  const written = writtenHost(raw);
  if (written !== undefined && written !== host)
    warnings.push(
      `the link is written to look like "${written}" but really goes to ${host} (encoded or look-alike characters)`,
    );
  if (/(^|\.)xn--/i.test(host))
    warnings.push('the address uses international characters (punycode): check the domain carefully');
  if (url.protocol !== 'https:' && !LOOPBACK.has(host)) warnings.push('the link is not https (http)');
  if (url.username || url.password) warnings.push('the link carries a user name or password');
  return { ok: true, href: url.href, host, warnings };
}
