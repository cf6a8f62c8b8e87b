import { FORM_POST_JS, LOGIN_CSS, LOGIN_JS, OFFER_JS } from './assets.js';
import { html, trusted, type SafeHtml } from './html.js';
import type { MethodView } from './methods.js';

export interface LoginView {
  /** Path prefix of the issuer ('' at the root), for every URL the browser uses. */
  base: string;
  requestId: string;
  appName: string;
  /** 1-based stage number and the number of stages. */
  step: number;
  steps: number;
  /** The flow's user once known; null at the first stage. */
  userId: string | null;
  /** At least one, in the stage's order. */
  methods: MethodView[];
  /** The method chosen at first (the one the user used last, when known). */
  preselected: string;
  /** Who is signing in, once known: a way out if it is someone else. */
  who?: { name: string; signOutCsrf: string | null; restartUrl: string | null } | null;
  /** The token of the "back to the app" form (OAuth flows only). */
  cancelCsrf?: string | null;
}

/** The page skeleton: the shared style sheet and, where the page needs one, its script asset. */
export function layout(
  base: string,
  title: string,
  body: SafeHtml,
  script: 'login' | 'form-post' | 'offer' | null,
  modules: string[] = [],
): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        <link rel="stylesheet" href="${base}/login/assets/login.css?v=${LOGIN_CSS.version}" />
        ${script === 'login' ? html`<script src="${base}/login/assets/login.js?v=${LOGIN_JS.version}" defer></script>` : ''}
        ${script === 'form-post' ? html`<script src="${base}/login/assets/form-post.js?v=${FORM_POST_JS.version}" defer></script>` : ''}
        ${script === 'offer' ? html`<script src="${base}/login/assets/offer.js?v=${OFFER_JS.version}" defer></script>` : ''}
        ${modules.map((src) => html`<script type="module" src="${src}"></script>`)}
      </head>
      <body>
        ${body}
      </body>
    </html> `.value;
}

function methodChoice(view: LoginView): SafeHtml {
  const options = view.methods.map(
    (m) =>
      html`<label class="choice"
        ><input type="radio" name="method" value="${m.id}" ${m.id === view.preselected ? trusted(' checked') : ''} />
        ${m.label}</label
      >`,
  );
  return html`<fieldset id="gh-methods" ${view.methods.length === 1 ? trusted(' hidden') : ''}>
    <legend>Verify with</legend>
    ${options}
  </fieldset>`;
}

/** One method's part of the form: its help, its inputs; shown while it is the chosen one. */
function methodSection(m: MethodView, chosen: boolean): SafeHtml {
  const inputs = m.inputs.map((input) => {
    const id = `gh-${m.id}-${input.field}`;
    return html`<div class="field" data-input>
      <label for="${id}">${input.label}</label>
      <input
        id="${id}"
        data-field="${input.field}"
        type="${input.type}"
        autocomplete="${input.autocomplete}"
        ${input.inputmode ? html` inputmode="${input.inputmode}"` : ''}
        autocapitalize="off"
        spellcheck="false"
        aria-describedby="gh-message${input.help ? ` ${id}-help` : ''}"
      />
      ${input.help ? html`<p class="note" id="${id}-help">${input.help}</p>` : ''}
    </div>`;
  });
  return html`<section
    class="method"
    data-method="${m.id}"
    data-label="${m.label}"
    data-sends="${m.sends?.button ?? ''}"
    data-again="${m.sends?.again ?? ''}"
    data-driven="${m.module ? 'yes' : ''}"
    data-discoverable="${m.discoverable ? 'yes' : ''}"
    ${chosen ? '' : trusted(' hidden')}
  >
    ${m.help ? html`<p class="note">${m.help}</p>` : ''} ${inputs}
  </section>`;
}

/** "Signed in as …": signing out (or starting over) lets someone else sign in to this app. */
function whoLine(view: LoginView): SafeHtml {
  const who = view.who;
  if (!who) return html``;
  if (who.signOutCsrf) {
    return html`<form class="signed-in" method="post" action="${view.base}/session/end_session">
      <p>
        Signed in as <strong>${who.name}</strong>.
        <input type="hidden" name="csrf" value="${who.signOutCsrf}" />
        <input type="hidden" name="request_id" value="${view.requestId}" />
        <button type="submit" name="confirm" value="yes" id="gh-sign-out">Not you? Sign out</button>
      </p>
    </form>`;
  }
  return html`<p class="signed-in">
    Signing in as <strong>${who.name}</strong>.
    ${who.restartUrl ? html`<a href="${who.restartUrl}" id="gh-not-you">Not you?</a>` : ''}
  </p>`;
}

/** The way back to the app: the app hears that the user cancelled (access_denied). */
function backToApp(view: LoginView): SafeHtml {
  if (!view.cancelCsrf) return html``;
  return html`<form class="back" method="post" action="${view.base}/login/cancel">
    <input type="hidden" name="request_id" value="${view.requestId}" />
    <input type="hidden" name="csrf" value="${view.cancelCsrf}" />
    <button type="submit" id="gh-cancel">Cancel and go back to ${view.appName}</button>
  </form>`;
}

/** The page of the flow's current stage. Inputs have no name: only login.js sends them. */
export function renderLoginPage(view: LoginView): string {
  // With a passkey among the methods, the browser may offer passkeys in the field's autofill.
  const autofill = view.methods.some((m) => m.discoverable) ? 'username webauthn' : 'username';
  const identifier = view.userId
    ? ''
    : html`<div class="field">
        <label for="gh-identifier">Username, email or phone</label>
        <input
          id="gh-identifier"
          type="text"
          autocomplete="${autofill}"
          autocapitalize="off"
          spellcheck="false"
          aria-describedby="gh-message"
        />
      </div>`;
  const body = html`<main
    class="card"
    id="gh-login"
    data-request-id="${view.requestId}"
    data-sub="${view.userId ?? ''}"
    data-base="${view.base}"
  >
    <p class="step">Step ${view.step} of ${view.steps}</p>
    <h1>Sign in to ${view.appName}</h1>
    ${whoLine(view)}
    <noscript><p class="message error">This page needs JavaScript to sign you in.</p></noscript>
    <form id="gh-form" method="post" novalidate>
      ${identifier} ${methodChoice(view)} ${view.methods.map((m) => methodSection(m, m.id === view.preselected))}
      <p id="gh-message" class="message" aria-live="polite" aria-atomic="true"></p>
      <button type="button" id="gh-send" hidden>Send code</button>
      <button type="submit" id="gh-submit" class="primary" disabled>Continue</button>
    </form>
    <form id="gh-done" method="post" action="${view.base}/login-srv/verification/login" hidden>
      <input type="hidden" name="requestId" value="${view.requestId}" />
      <input type="hidden" name="status_id" value="" />
      <input type="hidden" name="verificationType" value="" />
      <input type="hidden" name="sub" value="" />
      <input type="hidden" name="offer" value="" />
    </form>
    ${backToApp(view)}
  </main>`;
  const modules = view.methods.map((m) => m.module).filter((m): m is string => m !== null);
  return layout(view.base, `Sign in to ${view.appName}`, body, 'login', modules);
}

/**
 * After a login: the offer to set a method up for next time. "Not now" (or the button after a
 * setup) continues to the app through a form POST; offer.js runs the method's ceremony.
 */
export function renderOfferPage(view: {
  base: string;
  requestId: string;
  appName: string;
  method: string;
  offer: { title: string; text: string; accept: string };
  module: string | null;
}): string {
  const body = html`<main
    class="card"
    id="gh-offer"
    data-request-id="${view.requestId}"
    data-method="${view.method}"
    data-base="${view.base}"
  >
    <h1>${view.offer.title}</h1>
    <p>${view.offer.text}</p>
    <p id="gh-message" class="message" role="status" aria-live="polite"></p>
    <button type="button" id="gh-accept" class="primary">${view.offer.accept}</button>
    <form id="gh-continue" method="post" action="${view.base}/login/offer/done">
      <input type="hidden" name="request_id" value="${view.requestId}" />
      <input type="hidden" name="decision" value="later" id="gh-decision" />
      <button type="submit" id="gh-later">Not now, continue to ${view.appName}</button>
    </form>
  </main>`;
  return layout(view.base, view.offer.title, body, 'offer', view.module ? [view.module] : []);
}

/** A page that explains why the login cannot go on, with a way back to the app when there is one. */
export function renderProblemPage(
  view: Pick<LoginView, 'base' | 'requestId' | 'appName' | 'cancelCsrf'>,
  title: string,
  text: string,
): string {
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${text}</p>
    ${backToApp(view as LoginView)}
  </main>`;
  return layout(view.base, title, body, null);
}

/** A page that explains why the login cannot go on. It never redirects and runs no script. */
export function renderErrorPage(base: string, title: string, text: string): string {
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${text}</p>
    <p class="note">Go back to the app you came from and sign in again.</p>
  </main>`;
  return layout(base, title, body, null);
}

/** A short notice (done, cancelled): a title and a sentence, no script. */
export function renderNoticePage(base: string, title: string, text: string): string {
  return layout(
    base,
    title,
    html`<main class="card">
      <h1>${title}</h1>
      <p>${text}</p>
    </main>`,
    null,
  );
}
