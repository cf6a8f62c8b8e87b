// Gatehouse hosted pages: GatehouseMessages.of(root) answers t(key, fallback, vars), the message
// of root's data-messages with its {name} placeholders filled in; without the key, fallback,
// else the key itself. GatehouseMessages.afterwards(t, err) says what to do after an API error.
'use strict';
(function () {
  const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  window.GatehouseMessages = {
    of(root) {
      let messages = {};
      try {
        messages = JSON.parse(root.dataset.messages || '{}');
      } catch {
        messages = {};
      }
      return function t(key, fallback, vars) {
        const text = has(messages, key) ? messages[key] : fallback === undefined || fallback === null ? key : fallback;
        return String(text).replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name) =>
          vars && has(vars, name) ? String(vars[name]) : whole,
        );
      };
    },
    /**
     * What the person can do next, from an API error's details: the attempts the exchange has
     * left, when to try again; and, for what they cannot fix themselves, the reference to quote.
     */
    afterwards(t, err) {
      const details = (err && err.details) || {};
      const notes = [];
      const left = details.attempts_left;
      if (typeof left === 'number') {
        const key = left === 0 ? 'js.attempts_none' : left === 1 ? 'js.attempts_left_one' : 'js.attempts_left';
        notes.push(t(key, null, { count: left }));
      }
      const wait = Number(details.retry_after);
      if (wait > 0) {
        const minutes = wait >= 120;
        const count = Math.ceil(minutes ? wait / 60 : wait);
        // Minutes start at 2 (from 120 s): only a wait in seconds has a singular.
        const key = minutes ? 'js.retry_in_minutes' : count === 1 ? 'js.retry_in_seconds_one' : 'js.retry_in_seconds';
        notes.push(t(key, null, { count }));
      }
      const yours = ['VERIFICATION_FAILED', 'FIELD_MISSING', 'INVALID_FIELD', 'NETWORK', 'RESEND_TOO_SOON'];
      if (err && err.referenceNumber && !yours.includes(err.code)) {
        notes.push(t('js.reference', null, { id: err.referenceNumber }));
      }
      return notes;
    },
  };
})();
