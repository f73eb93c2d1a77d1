// The passkey pages' one script (served from /mrtr/assets/passkey.js, so their CSP allows only our own origin): it
// asks the server for a ceremony's options, lets the browser talk to the authenticator, and sends the answer back.
// Written here, short, rather than bundled: the pages have no build step.
export const PASSKEY_SCRIPT_PATH = '/mrtr/assets/passkey.js';

export const PASSKEY_SCRIPT = `'use strict';
(function () {
  var b64 = function (buf) {
    var s = ''; var bytes = new Uint8Array(buf);
    for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    return btoa(s).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  var bin = function (text) {
    var s = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
    var out = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out.buffer;
  };
  var post = function (url, csrf, body) {
    return fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-mrtr-csrf': csrf },
      body: JSON.stringify(body || {}),
    }).then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.message || 'refused'); return j; }); });
  };
  var say = function (text) {
    var el = document.getElementById('passkey-status');
    if (el) el.textContent = text;
  };
  var run = function (button) {
    var csrf = button.getAttribute('data-csrf');
    var create = button.getAttribute('data-ceremony') === 'register';
    var label = document.getElementById('passkey-label');
    button.disabled = true;
    say('Waiting for your passkey…');
    post(button.getAttribute('data-options'), csrf).then(function (start) {
      var o = start.options;
      o.challenge = bin(o.challenge);
      if (create) {
        o.user.id = bin(o.user.id);
        (o.excludeCredentials || []).forEach(function (c) { c.id = bin(c.id); });
        return navigator.credentials.create({ publicKey: o }).then(function (cred) {
          return post(button.getAttribute('data-verify'), csrf, {
            handle: start.handle, label: label ? label.value : '',
            response: {
              id: cred.id, rawId: b64(cred.rawId), type: cred.type, clientExtensionResults: {},
              authenticatorAttachment: cred.authenticatorAttachment || undefined,
              response: {
                clientDataJSON: b64(cred.response.clientDataJSON),
                attestationObject: b64(cred.response.attestationObject),
                transports: cred.response.getTransports ? cred.response.getTransports() : [],
              },
            },
          });
        });
      }
      (o.allowCredentials || []).forEach(function (c) { c.id = bin(c.id); });
      return navigator.credentials.get({ publicKey: o }).then(function (cred) {
        return post(button.getAttribute('data-verify'), csrf, {
          handle: start.handle,
          response: {
            id: cred.id, rawId: b64(cred.rawId), type: cred.type, clientExtensionResults: {},
            response: {
              clientDataJSON: b64(cred.response.clientDataJSON),
              authenticatorData: b64(cred.response.authenticatorData),
              signature: b64(cred.response.signature),
              userHandle: cred.response.userHandle ? b64(cred.response.userHandle) : undefined,
            },
          },
        });
      });
    }).then(function (done) {
      location.assign(done.next || location.href);
    }).catch(function (e) {
      button.disabled = false;
      say('Not done: ' + (e && e.message ? e.message : 'the passkey did not answer') + '. Try again.');
    });
  };
  document.querySelectorAll('button[data-ceremony]').forEach(function (button) {
    button.addEventListener('click', function () { run(button); });
  });
})();
`;
