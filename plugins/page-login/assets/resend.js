// Gatehouse login page: the send button of a method that sends a code, and the wait before it
// may send again. The wait is the server's: `resend_after` of an initiation, or `retry_after`
// of a 429 RESEND_TOO_SOON. Meanwhile the button is disabled and counts down ("Send a new code
// in 28 s"); then it shows its label and is enabled again (unless the page is busy).
// GatehouseResend.of(button, t) answers show(method, again, primary), enable(on) and
// heard(method id, payload).
'use strict';
(function () {
  window.GatehouseResend = {
    of(button, t) {
      const until = new Map(); // method id → when it may send again (ms)
      let method = null;
      let text = button.textContent;
      let enabled = true;
      let timer = null;

      const left = () => Math.max(0, (until.get(method) || 0) - Date.now());

      function paint() {
        const ms = left();
        const seconds = Math.ceil(ms / 1000);
        button.textContent = seconds ? t('js.resend_in', null, { count: seconds }) : text;
        button.disabled = !enabled || seconds > 0;
        clearTimeout(timer);
        // Next at the turn of the second the label shows.
        if (seconds) timer = setTimeout(paint, ms % 1000 || 1000);
      }

      return {
        /** The chosen method (login.js's view of it): its button, "send" or (again) "send a new code". */
        show(m, again, primary) {
          method = m.id;
          text = again ? m.again : m.sends;
          button.hidden = !m.sends;
          button.classList.toggle('primary', primary);
          paint();
        },
        /** Whether the page lets the button be used (not while busy or finished). */
        enable(on) {
          enabled = on;
          paint();
        },
        /** An initiation's answer (the API's envelope): the wait it names, if any. */
        heard(id, payload) {
          const data = payload && payload.success ? payload.data : null;
          const error = payload && !payload.success ? payload.error : null;
          const wait = data
            ? Number(data.resend_after)
            : error && error.code === 'RESEND_TOO_SOON'
              ? Number((error.details || {}).retry_after)
              : 0;
          if (wait > 0) until.set(id, Date.now() + wait * 1000);
          if (id === method) paint();
        },
      };
    },
  };
})();
