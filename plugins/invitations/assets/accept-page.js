// Gatehouse invitation page: the link's token is in the URL's fragment, which the browser never
// sends to a server (no access log, no Referer). This script moves it into the form's body, drops
// it from the address bar and history, and opens the invitation with a POST.
'use strict';
(function () {
  const form = document.getElementById('gh-invite-open');
  if (!form) return;
  const token = window.location.hash.replace(/^#/, '');
  history.replaceState(null, '', window.location.pathname);
  form.elements.namedItem('token').value = token;
  form.submit();
})();
