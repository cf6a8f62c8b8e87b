// The hosted login page's side of a device method (PUSH, PATTERN, TOUCHID, FACE): start the
// push, show the number to type on the device (number matching), then wait on the status with
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

/**
 * The number and, above it, what to do with it, made once per section. The instruction is
 * visible text (not a tooltip) and describes the number for screen readers (aria-describedby).
 */
function numberBox(section) {
  let box = section.querySelector('.push-number');
  if (!box) {
    const hint = document.createElement('p');
    hint.className = 'push-number-hint';
    hint.id = 'gh-' + method + '-number-hint';
    box = document.createElement('p');
    box.className = 'push-number';
    box.id = 'gh-' + method + '-number';
    box.setAttribute('aria-describedby', hint.id);
    box.setAttribute('aria-live', 'polite');
    section.append(hint, box);
  }
  const hint = section.querySelector('.push-number-hint');
  return {
    show(number, text) {
      hint.textContent = text;
      box.textContent = String(number);
      hint.hidden = box.hidden = false;
    },
    hide() {
      hint.hidden = box.hidden = true;
    },
  };
}

window.GatehouseLogin.register(method, {
  async start(ctx) {
    // A method may say it its own way (`method.<ID>.js.<name>`: "unlock it with your fingerprint").
    const message = (name, vars) =>
      ctx.t('method.' + method + '.js.' + name, ctx.t('js.device.' + name, null, vars), vars);
    const data = await ctx.initiate();
    const box = numberBox(ctx.section);
    const device = data.medium_text || message('yours');
    // The user types it on the device: a reflex tap on a stray request cannot approve it.
    if (data.push_selected_number !== undefined)
      box.show(data.push_selected_number, message('type', { device, number: data.push_selected_number }));
    else box.hide();
    let state = 'INITIATED';
    ctx.say(message(SAID.INITIATED, { device }), false);
    for (;;) {
      const now = await ctx.status(data.status_id, state);
      if (now.status === state) continue;
      state = now.status;
      if (state === 'AUTHENTICATED') {
        box.hide();
        return ctx.finish(data.status_id, data.sub);
      }
      if (ENDED[state]) {
        box.hide();
        throw { code: 'PUSH_' + state, error: message(ENDED[state]) };
      }
      if (SAID[state]) ctx.say(message(SAID[state], { device }), false);
    }
  },
});
