// Gatehouse hosted login page. Walks one stage: initiate the chosen method, verify its proof,
// then continue the login with a real form POST so the browser follows the server's 303.
// Every method is described by the server (its section of the form); a method with a browser
// module registers a driver with window.GatehouseLogin.register(id, driver) and runs its own
// ceremony through the context it is given (initiate, verify, say, t).
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const root = $('gh-login');
  const form = $('gh-form');
  const identifier = $('gh-identifier');
  const send = $('gh-send');
  const submit = $('gh-submit');
  const message = $('gh-message');
  const done = $('gh-done');
  if (!root || !form || !done) return;

  const requestId = root.dataset.requestId;
  const sub = root.dataset.sub || '';
  const api = (root.dataset.base || '') + '/verification-srv/authentication/';
  const t = window.GatehouseMessages.of(root);
  const resend = window.GatehouseResend.of(send, t);
  // After these the exchange is spent: the next try starts a new one.
  const SPENT = ['TOO_MANY_ATTEMPTS', 'EXCHANGE_EXPIRED', 'EXCHANGE_USED', 'EXCHANGE_INVALID', 'WRONG_FLOW_STAGE'];

  const drivers = new Map();
  window.GatehouseLogin = {
    register(id, driver) {
      drivers.set(id, driver);
      render();
      autofill(id, driver);
    },
  };

  /**
   * A driver of a method that names the user itself (a passkey) may wait, from the start, for
   * the user to pick a credential in the username field's autofill (conditional mediation).
   * It runs in the background; if it ends without a sign-in, nothing is said.
   */
  function autofill(id, driver) {
    if (!identifier || typeof driver.autofill !== 'function') return;
    const section = Array.prototype.find.call(form.querySelectorAll('section.method'), (s) => s.dataset.method === id);
    if (!section || section.dataset.discoverable !== 'yes') return;
    const m = { id: id, label: section.dataset.label, section: section, inputs: [] };
    Promise.resolve()
      .then(() => driver.autofill(context(m)))
      .catch(() => undefined);
  }

  let exchange = null; // { id, method }
  let busy = false;
  let finished = false;

  /** The chosen method: its section and what it needs. */
  function current() {
    const radio = form.querySelector('input[name="method"]:checked');
    const section = Array.prototype.find.call(
      form.querySelectorAll('section.method'),
      (s) => s.dataset.method === radio.value,
    );
    const inputs = Array.prototype.slice.call(section.querySelectorAll('input[data-field]'));
    const d = section.dataset;
    return {
      id: d.method,
      label: d.label,
      sends: d.sends,
      again: d.again,
      driven: d.driven === 'yes',
      discoverable: d.discoverable === 'yes',
      section,
      inputs,
    };
  }

  function say(text, isError) {
    message.textContent = text;
    message.className = 'message' + (text ? (isError ? ' error' : ' info') : '');
  }

  /** The server's text as a sentence, where the page has no message of its own for the code. */
  function sentence(text) {
    const s = String(text || t('js.failed'));
    return s.charAt(0).toUpperCase() + s.slice(1) + (/[.!?]$/.test(s) ? '' : '.');
  }

  /** Shows the chosen method's section, and its inputs once there is something to type. */
  function render() {
    const m = current();
    form.querySelectorAll('section.method').forEach((s) => (s.hidden = s !== m.section));
    const waiting = Boolean(m.sends) && !exchange;
    m.section.querySelectorAll('[data-input]').forEach((row) => (row.hidden = waiting));
    resend.show(m, Boolean(exchange), waiting);
    submit.hidden = waiting;
  }

  function setBusy(on) {
    busy = on;
    form.setAttribute('aria-busy', on ? 'true' : 'false');
    submit.disabled = on || finished;
    resend.enable(!on && !finished);
  }

  function focusNext() {
    const m = current();
    if (identifier && !identifier.value.trim()) return identifier.focus();
    if (m.sends && !exchange) return send.focus();
    (m.inputs[0] || submit).focus();
  }

  async function call(method, step, body) {
    let response;
    try {
      response = await fetch(api + encodeURIComponent(method) + '/' + step, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
        credentials: 'same-origin',
      });
    } catch {
      throw { code: 'NETWORK', error: t('js.network') };
    }
    const payload = await response.json().catch(() => null);
    if (step === 'initiation') resend.heard(method, payload);
    if (payload && payload.success) return payload.data;
    throw (payload && payload.error) || { code: 'HTTP_' + response.status, error: t('js.failed') };
  }

  async function initiate(m, extra) {
    const body = Object.assign({ request_id: requestId }, extra || {});
    if (sub) {
      body.usage_type = 'MULTIFACTOR_AUTHENTICATION';
      body.sub = sub;
    } else {
      body.usage_type = 'INITIAL_AUTHENTICATION';
      body.identifier = identifier.value.trim();
    }
    const data = await call(m.id, 'initiation', body);
    exchange = { id: data.exchange_id.exchange_id, method: m.id };
    return data;
  }

  /** Verifies the proof on the current exchange and hands the AUTHENTICATED status to the login flow. */
  async function verify(m, fields) {
    if (!exchange || exchange.method !== m.id) await initiate(m);
    const data = await call(m.id, 'verification', Object.assign({ exchange_id: exchange.id }, fields));
    finish(m, data.status_id, data.sub);
  }

  /** Hands an AUTHENTICATED status to the login flow (a real form POST; the server redirects). */
  function finish(m, statusId, userId) {
    finished = true;
    done.elements.namedItem('status_id').value = statusId;
    done.elements.namedItem('verificationType').value = m.id;
    done.elements.namedItem('sub').value = userId || '';
    say(t('js.verified'), false);
    done.submit();
  }

  /**
   * A verification status. With known (the state the caller has seen), a long poll: the
   * server answers once the state differs, or after 25 s. Should it answer at once with the same
   * state (at its limit of waiting requests), this waits two seconds: plain polling.
   */
  async function status(statusId, known) {
    const url = api.replace('/authentication/', '/verificationstatus/') + encodeURIComponent(statusId);
    const started = Date.now();
    const response = await fetch(url + (known ? '?wait=25&state=' + encodeURIComponent(known) : ''), {
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    }).catch(() => null);
    const payload = response ? await response.json().catch(() => null) : null;
    if (!payload || !payload.success) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (!payload) return { status: known };
      throw payload.error;
    }
    if (known && payload.data.status === known && Date.now() - started < 1000)
      await new Promise((resolve) => setTimeout(resolve, 2000));
    return payload.data;
  }

  function fail(err) {
    const m = current();
    if (err && SPENT.includes(err.code)) exchange = null;
    render();
    const failed = err && err.code === 'VERIFICATION_FAILED';
    if (failed) m.inputs.forEach((input) => (input.value = ''));
    // The page's words for the API's code (js.error.<CODE>), else the server's; then what to do next.
    const known = err && err.code ? t('js.error.' + err.code, '') : '';
    const next = window.GatehouseMessages.afterwards(t, err).join(' ');
    say((failed ? t('js.generic') : known || sentence(err && err.error)) + (next ? ' ' + next : ''), true);
    focusNext();
  }

  function needsIdentifier() {
    // A passkey names the user itself: it may start with the field empty.
    if (!identifier || identifier.value.trim() || current().discoverable) return false;
    say(t('js.enter_identifier'), true);
    identifier.focus();
    return true;
  }

  async function run(task) {
    if (busy || finished) return;
    setBusy(true);
    try {
      await task();
    } catch (err) {
      fail(err);
    } finally {
      setBusy(false);
    }
  }

  /** What a method's browser module may do: the page's own steps, for its ceremony. */
  function context(m) {
    return {
      method: m.id,
      label: m.label,
      section: m.section,
      identifier: () => (identifier ? identifier.value.trim() : null),
      initiate: (extra) => initiate(m, extra),
      verify: (fields) => verify(m, fields),
      status,
      finish: (statusId, userId) => finish(m, statusId, userId),
      say,
      t,
    };
  }

  send.addEventListener('click', () => {
    if (needsIdentifier()) return;
    const m = current();
    run(async () => {
      const data = await initiate(m);
      render();
      m.inputs.forEach((input) => (input.value = ''));
      const sent = data.medium_text ? t('js.code_sent_to', null, { to: data.medium_text }) : t('js.code_sent');
      say(sub ? sent : t('js.code_maybe_sent', null, { method: m.label }), false);
      focusNext();
    });
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (needsIdentifier()) return;
    const m = current();
    if (m.sends && !exchange) {
      send.click();
      return;
    }
    if (m.driven) {
      const driver = drivers.get(m.id);
      if (!driver) {
        say(t('js.module_failed', null, { method: m.label }), true);
        return;
      }
      run(() => driver.start(context(m)));
      return;
    }
    const fields = {};
    for (const input of m.inputs) {
      const value = input.type === 'password' ? input.value : input.value.trim();
      if (!value) {
        const label = form.querySelector('label[for="' + input.id + '"]');
        const name = label ? label.textContent.trim() : t('js.answer');
        say(t('js.enter_field', null, { label: name, label_lower: name.toLowerCase() }), true);
        input.focus();
        return;
      }
      fields[input.dataset.field] = value;
    }
    run(() => verify(m, fields));
  });

  // Another method or another account needs a new exchange.
  form.addEventListener('change', (event) => {
    if (event.target.name !== 'method') return;
    exchange = null;
    current().inputs.forEach((input) => (input.value = ''));
    say('', false);
    render();
  });
  if (identifier) {
    identifier.addEventListener('input', () => {
      if (!exchange) return;
      exchange = null;
      render();
    });
  }

  render();
  setBusy(false);
  focusNext();
})();
