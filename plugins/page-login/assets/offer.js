'use strict';
(function () {
  const root = document.getElementById('gh-offer');
  const accept = document.getElementById('gh-accept');
  const decision = document.getElementById('gh-decision');
  const message = document.getElementById('gh-message');
  const form = document.getElementById('gh-continue');
  if (!root || !accept || !form) return;
  const t = window.GatehouseMessages.of(root);
  const drivers = new Map();
  window.GatehouseLogin = { register: (id, driver) => drivers.set(id, driver) };

  function say(text, isError) {
    message.textContent = text;
    message.className = 'message' + (text ? (isError ? ' error' : ' info') : '');
  }

  async function setup(step, body) {
    const response = await fetch(root.dataset.base + '/login/offer/setup/' + encodeURIComponent(step), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(Object.assign({ request_id: root.dataset.requestId }, body || {})),
      credentials: 'same-origin',
    }).catch(() => null);
    const payload = response ? await response.json().catch(() => null) : null;
    if (payload && payload.success) return payload.data;
    throw (payload && payload.error) || { code: 'NETWORK', error: t('js.offer.network') };
  }

  accept.addEventListener('click', async () => {
    const driver = drivers.get(root.dataset.method);
    if (!driver || typeof driver.enroll !== 'function') return say(t('js.offer.unavailable'), true);
    accept.disabled = true;
    try {
      await driver.enroll({ setup: setup, say: say, t: t });
      say(t('js.offer.done'), false);
      decision.value = 'done';
      form.submit();
    } catch (err) {
      say((err && err.error) || t('js.offer.failed'), true);
      accept.disabled = false;
    }
  });
})();
