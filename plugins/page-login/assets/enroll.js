// Gatehouse hosted page: a method set up during a login by its browser ceremony (a passkey).
// The method's module registers its driver; the button runs the driver's enroll(ctx), whose
// setup steps this page sends to /login/enroll/setup/{step}; then the browser goes where the
// server says (the login's next stage, the app, or the required-actions page).
'use strict';
(function () {
  const root = document.getElementById('gh-enroll-ceremony');
  const accept = document.getElementById('gh-accept');
  const message = document.getElementById('gh-message');
  if (!root || !accept) return;
  const t = window.GatehouseMessages.of(root);
  const drivers = new Map();
  window.GatehouseLogin = { register: (id, driver) => drivers.set(id, driver) };
  let next = null;

  function say(text, isError) {
    message.textContent = text;
    message.className = 'message' + (text ? (isError ? ' error' : ' info') : '');
  }

  async function setup(step, body) {
    const response = await fetch(root.dataset.base + '/login/enroll/setup/' + encodeURIComponent(step), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(
        Object.assign({}, body || {}, {
          request_id: root.dataset.requestId,
          method: root.dataset.method,
          mode: root.dataset.mode,
        }),
      ),
      credentials: 'same-origin',
    }).catch(() => null);
    const payload = response ? await response.json().catch(() => null) : null;
    if (payload && payload.success) {
      next = payload.location || null;
      return payload.data;
    }
    throw (payload && payload.error) || { code: 'NETWORK', error: t('js.offer.network') };
  }

  accept.addEventListener('click', async () => {
    const driver = drivers.get(root.dataset.method);
    if (!driver || typeof driver.enroll !== 'function') return say(t('js.offer.unavailable'), true);
    accept.disabled = true;
    try {
      await driver.enroll({ setup: setup, say: say, t: t });
      say(t('js.offer.done'), false);
      if (next) window.location.assign(next);
    } catch (err) {
      say((err && err.error) || t('js.offer.failed'), true);
      accept.disabled = false;
    }
  });
})();
