// Gatehouse hosted pages: GatehouseMessages.of(root) answers t(key, fallback, vars), the message
// of root's data-messages with its {name} placeholders filled in; without the key, fallback,
// else the key itself.
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
  };
})();
