// Gatehouse hosted pages: a "Show" / "Hide" button beside each password field. The button
// (type=button, no name: never submitted) switches the field between password and text; a
// click leaves the focus and the caret in the field. Before any form is sent the fields are
// passwords again, so a page script reads them untrimmed and password managers see what they
// expect. The texts come from this script element's data attributes (the page's language).
'use strict';
(function () {
  const texts = (document.currentScript && document.currentScript.dataset) || {};
  const say = (key, fallback) => String(texts[key] || fallback);

  // The name is the visible word: two fields have two buttons, each right after its field and
  // tied to it by aria-controls (an aria-label with the field's label would make it a second
  // element named like the field).
  function shown(button, input, on) {
    input.type = on ? 'text' : 'password';
    button.setAttribute('aria-pressed', on ? 'true' : 'false');
    button.textContent = on ? say('hide', 'Hide') : say('show', 'Show');
  }

  function addToggle(input, n) {
    if (!input.id) input.id = 'gh-password-' + n;
    const row = document.createElement('div');
    row.className = 'reveal';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'reveal-toggle';
    button.setAttribute('aria-controls', input.id);
    const focused = document.activeElement === input;
    input.parentNode.insertBefore(row, input);
    row.appendChild(input);
    row.appendChild(button);
    if (focused) input.focus();
    shown(button, input, false);
    // A pointer press would move the focus to the button: the person was typing in the field.
    button.addEventListener('mousedown', (event) => event.preventDefault());
    button.addEventListener('click', () => {
      const typing = document.activeElement === input;
      const start = input.selectionStart;
      const end = input.selectionEnd;
      shown(button, input, input.type === 'password');
      if (typing) {
        input.focus();
        if (start !== null && end !== null) input.setSelectionRange(start, end);
      }
    });
  }

  const fields = document.querySelectorAll('input[type="password"]');
  Array.prototype.forEach.call(fields, addToggle);

  // Capture: before the page's own submit handlers read the fields.
  document.addEventListener(
    'submit',
    (event) => {
      event.target.querySelectorAll('button.reveal-toggle[aria-pressed="true"]').forEach((button) => {
        const input = document.getElementById(button.getAttribute('aria-controls'));
        if (input) shown(button, input, false);
      });
    },
    true,
  );
})();
