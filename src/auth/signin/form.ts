// Reading a page's form POST: url-encoded, small, from our own origin.
import { MrtrError, type PageRequest, readBodyText } from '../../protocol/index.js';

/** Forms here are a few short fields; anything larger is not one of ours. */
const MAX_FORM_BYTES = 16 * 1024;

export class FormError extends MrtrError {
  override readonly name = 'FormError';
  declare readonly code: 'ERR_PAGE_FORM';
  constructor(message: string, options?: ErrorOptions) {
    super('ERR_PAGE_FORM', message, options);
  }
}

/** The fields of a url-encoded POST body; rejects other types and bodies over 16 KiB. */
export function readForm(req: PageRequest): Promise<URLSearchParams> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    req.resume();
    return Promise.reject(new FormError('expected a form (application/x-www-form-urlencoded)'));
  }
  return readBodyText(req, MAX_FORM_BYTES, () => new FormError('form too large')).then(
    (text) => new URLSearchParams(text),
  );
}

/** A POST from a page of ours: the browser's Origin header names our origin (the first CSRF defence). */
export function fromOurOrigin(req: PageRequest, origin: string): boolean {
  return req.headers.origin === origin;
}
