// The account page's side of a setup a form cannot do (a passkey: WebAuthn in the browser). The
// method's own module registers its driver with window.GatehouseLogin.register(id, driver); the
// button runs the driver's enroll(ctx), whose ctx.setup(step, body) posts to this page's setup
// route with the sign-in's CSRF token. Loaded before the method's module (document order).
'use strict';
(function () {
  const drivers = new Map();
  window.GatehouseLogin = { register: (id, driver) => drivers.set(id, driver) };

  function start() {
    const root = document.getElementById('gh-setup');
    const button = document.getElementById('gh-setup-start');
    const message = document.getElementById('gh-message');
    if (!root || !button || !message) return;
    const messages = JSON.parse(root.dataset.messages || '{}');
    const t = (key, fallback) => messages[key] || fallback || key;

    function say(text, isError) {
      message.textContent = text;
      message.className = 'notice' + (isError ? ' error' : '');
      message.hidden = !text;
    }

    async function setup(step, body) {
      const form = new URLSearchParams({ csrf: root.dataset.csrf });
      for (const [name, value] of Object.entries(body || {})) form.set(name, String(value));
      const response = await fetch(root.dataset.action + '/' + encodeURIComponent(step), {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        credentials: 'same-origin',
      }).catch(() => null);
      const payload = response ? await response.json().catch(() => null) : null;
      if (payload && payload.success) return payload.data;
      throw (payload && payload.error) || { code: 'NETWORK', error: t('network') };
    }

    button.addEventListener('click', async () => {
      const driver = drivers.get(root.dataset.method);
      if (!driver || typeof driver.enroll !== 'function') return say(t('unavailable'), true);
      button.disabled = true;
      try {
        await driver.enroll({ setup: setup, say: say, t: t });
        window.location.assign(root.dataset.done);
      } catch (err) {
        say((err && err.error) || t('failed'), true);
        button.disabled = false;
      }
    });
    button.disabled = false;
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
