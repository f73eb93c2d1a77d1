// The console's one script (served from /mrtr/assets/console.js, so the pages' CSP allows only our own origin): it
// listens to the live stream and, when a topic a page shows changed, fetches the page again and swaps its live
// parts. A part someone is typing in is left alone until they are done. Without script the pages work as they are.
export const CONSOLE_SCRIPT_PATH = '/mrtr/assets/console.js';

export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var parts = document.querySelectorAll('[data-live]');
  if (!parts.length || !window.EventSource) return;
  var busy = function (el) {
    var a = document.activeElement;
    if (a && el.contains(a) && /^(TEXTAREA|INPUT|SELECT)$/.test(a.tagName)) return true;
    return Array.prototype.some.call(el.querySelectorAll('textarea'), function (t) { return t.value !== ''; });
  };
  var refresh = function (topic) {
    fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (!text) return;
        var next = new DOMParser().parseFromString(text, 'text/html');
        document.querySelectorAll('[data-live]').forEach(function (el) {
          if (el.getAttribute('data-live') !== topic || busy(el)) return;
          var fresh = next.getElementById(el.id);
          if (fresh) el.replaceWith(document.importNode(fresh, true));
        });
        document.documentElement.setAttribute('data-refreshed', String(Date.now()));
      })
      .catch(function () {});
  };
  var source = new EventSource('/mrtr/console/live');
  source.addEventListener('changed', function (e) { refresh(e.data); });
  source.addEventListener('open', function () { document.documentElement.setAttribute('data-live-open', 'true'); });
})();
`;
