// Form fields that ask for a secret. MCP forbids servers to request passwords, API keys, tokens or one-time codes
// in form mode (client/elicitation.mdx "Safe URL Handling" / "Security Considerations"): a form that does is either
// careless or phishing, so the person is warned, the value masked, and refusing is the default.

const SECRET_KINDS: ReadonlyArray<{ what: string; pattern: RegExp }> = [
  { what: 'a password', pattern: /pass(word|wd|phrase|code)\b|\bpwd\b|kennwort|mot de passe/i },
  {
    what: 'a one-time or security code',
    pattern:
      /\b(totp|otp|hotp|2fa|mfa|pin|cvv|cvc)\b|one[- ]?time|two[- ]?factor|(verification|security|auth(entication)?|sms|login) code/i,
  },
  {
    what: 'an API key, token or secret',
    pattern:
      /api[ _-]?key|apikey|access[ _-]?key|secret|\btoken\b|private[ _-]?key|credential|bearer|seed phrase|recovery (phrase|code)/i,
  },
];

/** What secret a field seems to ask for ("a password", …), or undefined. */
export function secretAskedFor(
  name: string,
  schema: { title?: unknown; description?: unknown; format?: unknown; writeOnly?: unknown },
): string | undefined {
  if (schema.format === 'password' || schema.writeOnly === true) return 'a password or secret';
  // Property names are often camelCase or snake_case: split them so `apiKey` and `otp_code` read as words.
  const words = (s: unknown) =>
    typeof s === 'string' ? s.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/_/g, ' ') : '';
  const text = [words(name), words(schema.title), words(schema.description)].join(' \n ');
  for (const kind of SECRET_KINDS) if (kind.pattern.test(text)) return kind.what;
  return undefined;
}
