// The two WebAuthn ceremonies, with @simplewebauthn/server doing the cryptography: registering a passkey for the
// signed-in person, and proving a step-up with one. Each challenge is single use and bound to the person, the browser
// session and (for a step-up) the step-up; user verification is required; only the person's own credentials count.
import type {
  AuthenticationResponseJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { Person } from './approval-book.js';
import { PASSKEY_DEFAULTS, type Passkey, type PasskeyBook, personKey } from './passkey-book.js';

/** Where the ceremonies happen: the server's origin, and its host as the relying party's id. */
export interface RelyingParty {
  readonly origin: string;
  readonly id: string;
  readonly name: string;
}

export type CeremonyRefusal =
  | 'unknown_challenge'
  | 'wrong_session'
  | 'wrong_step_up'
  | 'not_your_passkey'
  | 'not_verified'
  | 'too_many'
  | 'bad_response';

// Loaded with the first ceremony: it is the heaviest package a server or gateway would otherwise load at start.
const webauthn = () => import('@simplewebauthn/server');

export interface Who {
  readonly person: Pick<Person, 'subject' | 'issuer'> & { name?: string | undefined };
  readonly sid: string;
}

export async function registrationOptions(book: PasskeyBook, rp: RelyingParty, who: Who) {
  const existing = await book.list(who.person);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: who.person.subject,
    userDisplayName: who.person.name ?? who.person.subject,
    userID: Buffer.from(personKey(who.person)),
    attestationType: 'none',
    excludeCredentials: existing.map((k) => ({ id: k.id })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
  });
  const handle = await book.challenge({
    kind: 'register',
    challenge: options.challenge,
    subject: who.person.subject,
    issuer: who.person.issuer,
    sid: who.sid,
  });
  return { handle, options };
}

export async function finishRegistration(
  book: PasskeyBook,
  rp: RelyingParty,
  who: Who,
  handle: string,
  response: RegistrationResponseJSON,
  label: string,
): Promise<Passkey | CeremonyRefusal> {
  const c = await book.takeChallenge(handle);
  if (c?.kind !== 'register') return 'unknown_challenge';
  if (c.subject !== who.person.subject || c.issuer !== who.person.issuer || c.sid !== who.sid)
    return 'wrong_session';
  let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verified = await (await webauthn()).verifyRegistrationResponse({
      response,
      expectedChallenge: c.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
  } catch {
    return 'bad_response';
  }
  if (!verified.verified || !verified.registrationInfo) return 'not_verified';
  const { credential } = verified.registrationInfo;
  const key: Passkey = {
    id: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
    label,
    createdAt: book.clock(),
  };
  let refused: CeremonyRefusal | undefined;
  await book.update(who.person, (keys) => {
    if (keys.length >= PASSKEY_DEFAULTS.maxPerPerson) {
      refused = 'too_many';
      return keys;
    }
    return [...keys.filter((k) => k.id !== key.id), key];
  });
  return refused ?? key;
}

export async function authenticationOptions(book: PasskeyBook, rp: RelyingParty, who: Who, stepUpId: string) {
  const keys = await book.list(who.person);
  if (keys.length === 0) return undefined;
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: keys.map((k) => ({ id: k.id, transports: k.transports as never })),
    userVerification: 'required',
  });
  const handle = await book.challenge({
    kind: 'step_up',
    challenge: options.challenge,
    subject: who.person.subject,
    issuer: who.person.issuer,
    sid: who.sid,
    stepUpId,
  });
  return { handle, options };
}

export async function finishAuthentication(
  book: PasskeyBook,
  rp: RelyingParty,
  who: Who,
  stepUpId: string,
  handle: string,
  response: AuthenticationResponseJSON,
): Promise<true | CeremonyRefusal> {
  const c = await book.takeChallenge(handle);
  if (c?.kind !== 'step_up') return 'unknown_challenge';
  if (c.subject !== who.person.subject || c.issuer !== who.person.issuer || c.sid !== who.sid)
    return 'wrong_session';
  if (c.stepUpId !== stepUpId) return 'wrong_step_up';
  const key = (await book.list(who.person)).find((k) => k.id === response.id);
  // Another person's passkey is unknown here: only the flow's principal's own credentials are looked at.
  if (!key) return 'not_your_passkey';
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: c.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: key.id,
        publicKey: Buffer.from(key.publicKey, 'base64url'),
        counter: key.counter,
        transports: key.transports as never,
      },
      requireUserVerification: true,
    });
  } catch {
    // A response that does not verify: a wrong signature, origin or challenge, or a counter that did not grow (a
    // cloned authenticator) — the library throws for each.
    return 'not_verified';
  }
  if (!verified.verified) return 'not_verified';
  const counter = verified.authenticationInfo.newCounter;
  await book.update(who.person, (keys) =>
    keys.map((k) => (k.id === key.id ? { ...k, counter, lastUsedAt: book.clock() } : k)),
  );
  return true;
}
