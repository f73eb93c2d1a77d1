// The example of docs/state.md: seal a state in one round, open it in the next. It runs as it is; the request and
// the caller are made up below, where a real server would take them from the request and its authentication.
// #region seal-open
import { invalidParams } from 'mrtr/protocol';
import { createEphemeralKeyring, Keyring, StateCodec } from 'mrtr/state';

// #endregion

const auth = { sub: 'user-17', iss: 'https://idp.example', clientId: 'billing-ui' };
const params = { arguments: { order: 'A-17', amount: 120 }, requestState: '' };
const log = { warn: (fields: object, message: string) => console.error(message, fields) };

// #region seal-open

const keyring = process.env.MRTR_STATE_KEYS
  ? Keyring.fromSpec(process.env.MRTR_STATE_KEYS)
  : createEphemeralKeyring(); // single process only; warn (see below)

const codec = new StateCodec({ keyring, audience: 'billing-server' });

// round n: the handler needs input
const binding = {
  principal: { subject: auth.sub, issuer: auth.iss, clientId: auth.clientId },
  method: 'tools/call',
  target: 'refund',
  arguments: params.arguments,
};
const requestState = codec.seal({ step: 'confirm', amount: 120 }, binding, { round: 1 });
// #endregion
params.requestState = requestState; // what the client sends back
// #region seal-open

// round n+1: the client repeats the call with requestState
const opened = codec.open(params.requestState, binding);
if (!opened.ok) {
  log.warn({ reason: opened.reason }, 'requestState rejected'); // never log the token itself
  throw invalidParams('invalid requestState'); // one fixed -32602 on the wire, whatever the reason
}
const { payload, flowId, round, issuedAt, expiresAt, kid } = opened.state;
// #endregion

export const openedState = { payload, flowId, round, issuedAt, expiresAt, kid };
