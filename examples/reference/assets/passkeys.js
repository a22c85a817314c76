/*
 * Passkeys on the service's pages (served after @simplewebauthn/browser's
 * bundle, as one file from the service's own origin: the pages' CSP allows
 * exactly its URL). Every form it drives works the same way: ask the service
 * for options (same origin, the form's CSRF token), run the browser's
 * ceremony, put its answer in the form's hidden `response` field and submit
 * the form as a plain POST: the service answers with a page or a redirect,
 * as it does without JavaScript. Without WebAuthn the passkey parts stay hidden.
 */
(function () {
  'use strict';
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) return;

  document.querySelectorAll('[data-passkey-hidden]').forEach(function (el) { el.hidden = false; });
  document.querySelectorAll('[data-nojs]').forEach(function (el) { el.hidden = true; });

  function status(form, message) {
    var box = document.getElementById(form.getAttribute('data-status'));
    if (!box) return;
    box.textContent = message;
    box.hidden = !message;
  }

  function options(form) {
    var body = new URLSearchParams();
    ['csrf', 'name'].forEach(function (field) {
      if (form.elements[field]) body.set(field, form.elements[field].value);
    });
    return fetch(form.getAttribute('data-options'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
    }).then(function (res) {
      return res.json().then(function (json) {
        if (!res.ok && json.location) {
          // A fresh sign-in first: the service's page says why and leads to it.
          window.location.assign(json.location);
          return new Promise(function () {});
        }
        if (!res.ok) throw Object.assign(new Error(json.message || ''), { shown: true });
        return json;
      });
    });
  }

  function send(form, answer) {
    form.elements.response.value = JSON.stringify(answer);
    form.submit();
  }

  function failed(form, err) {
    if (err && err.name === 'AbortError') return;
    status(form, err && err.shown ? err.message : form.getAttribute('data-failed'));
  }

  var busy = false;
  function run(form, ceremony) {
    if (busy) return;
    busy = true;
    status(form, '');
    options(form)
      .then(function (optionsJSON) { return ceremony(optionsJSON); })
      .then(function (answer) { send(form, answer); })
      .catch(function (err) {
        busy = false;
        failed(form, err);
        if (form.hasAttribute('data-autofill')) autofill(form);
      });
  }

  // Sign-in: the button asks for any passkey of this site; where the browser
  // offers passkeys in the address field's autofill (conditional UI), that
  // request waits there meanwhile.
  function autofill(form) {
    lib.browserSupportsWebAuthnAutofill().then(function (yes) {
      if (!yes || busy) return;
      options(form)
        .then(function (optionsJSON) { return lib.startAuthentication({ optionsJSON: optionsJSON, useBrowserAutofill: true }); })
        .then(function (answer) { busy = true; send(form, answer); })
        .catch(function () { /* another request took over, or the person went another way */ });
    });
  }

  var signIn = document.getElementById('passkey-signin');
  if (signIn) {
    signIn.addEventListener('submit', function (event) {
      event.preventDefault();
      run(signIn, function (optionsJSON) { return lib.startAuthentication({ optionsJSON: optionsJSON }); });
    });
    if (signIn.hasAttribute('data-autofill')) autofill(signIn);
    // The service could not find the passkey the browser offered: tell the
    // browser, so it stops offering it (WebAuthn Level 3 signals).
    var unknown = signIn.getAttribute('data-unknown');
    if (unknown && typeof lib.sendSignal === 'function') {
      lib.sendSignal({ signalName: 'unknownCredential', rpID: signIn.getAttribute('data-rp'), credentialID: unknown }).catch(function () {});
    }
  }

  document.querySelectorAll('form[data-passkey-create]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (!form.reportValidity()) return;
      run(form, function (optionsJSON) { return lib.startRegistration({ optionsJSON: optionsJSON }); });
    });
  });
})();
