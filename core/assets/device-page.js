// The hosted login page's side of a device method (PUSH, PATTERN, TOUCHID, FACE): start the
// push, show the number to pick on the device (number matching), then wait on the status with
// long polls and continue the login once the device completed the method. The core serves this
// file under /login/methods/<METHOD>/<hash>/device-page.js, so the path names the method.
// What it says comes from the page's messages (`js.device.*` in core/locales).
'use strict';

const method = decodeURIComponent(new URL(import.meta.url).pathname.split('/').slice(-3)[0]);

/** What the user is told in each state of the push: its message key under `js.device.`. */
const SAID = {
  INITIATED: 'initiated',
  PUSH_ACKNOWLEDGED: 'acknowledged',
  ALLOWED: 'allowed',
};
/** The ends of a push that are not a success, as errors the page shows. */
const ENDED = {
  DENIED: 'denied',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
  CONSUMED: 'consumed',
};

function numberBox(section) {
  let box = section.querySelector('.push-number');
  if (!box) {
    box = document.createElement('p');
    box.className = 'push-number';
    box.setAttribute('aria-live', 'polite');
    section.appendChild(box);
  }
  return box;
}

window.GatehouseLogin.register(method, {
  async start(ctx) {
    const message = (name, vars) => ctx.t('js.device.' + name, null, vars);
    const data = await ctx.initiate();
    const box = numberBox(ctx.section);
    const device = data.medium_text || message('yours');
    if (data.push_selected_number !== undefined) {
      box.hidden = false;
      box.textContent = String(data.push_selected_number);
      box.title = message('pick', { device });
    } else {
      box.hidden = true;
    }
    let state = 'INITIATED';
    ctx.say(message(SAID.INITIATED, { device }), false);
    for (;;) {
      const now = await ctx.status(data.status_id, state);
      if (now.status === state) continue;
      state = now.status;
      if (state === 'AUTHENTICATED') {
        box.hidden = true;
        return ctx.finish(data.status_id, data.sub);
      }
      if (ENDED[state]) {
        box.hidden = true;
        throw { code: 'PUSH_' + state, error: message(ENDED[state]) };
      }
      if (SAID[state]) ctx.say(message(SAID[state], { device }), false);
    }
  },
});
