import { html, pageLayout, type PageContext, type SafeHtml } from '@gatehouse-auth/core';
import { LOGIN_JS, MESSAGES_JS, OFFER_JS, RESEND_JS } from './assets.js';
import type { Messages, MethodView } from './methods.js';

/** The messages the page scripts say themselves (a method module's are `method.<ID>.js.…`). */
const SCRIPT_MESSAGES = 'js.';

export interface LoginView extends PageContext {
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
  /** The app's `login_hint`: what the identifier field starts with (first stage only). */
  loginHint?: string | null;
  /** The registration page for this login, when a plugin offers one for the app (first stage only). */
  registerUrl?: string | null;
}

/** The core's page skeleton with, where the page needs them, its script asset and the methods' modules. */
export function layout(
  page: PageContext,
  title: string,
  body: SafeHtml,
  script: 'login' | 'offer' | null,
  modules: string[] = [],
): string {
  const base = page.base;
  const head = html`${script ? html`<script src="${base}/login/assets/messages.js?v=${MESSAGES_JS.version}" defer></script>` : ''}
  ${
    script === 'login'
      ? html`<script src="${base}/login/assets/resend.js?v=${RESEND_JS.version}" defer></script>
          <script src="${base}/login/assets/login.js?v=${LOGIN_JS.version}" defer></script>`
      : ''
  }
  ${script === 'offer' ? html`<script src="${base}/login/assets/offer.js?v=${OFFER_JS.version}" defer></script>` : ''}
  ${modules.map((src) => html`<script type="module" src="${src}"></script>`)}`;
  return pageLayout(page, title, body, null, head);
}

/**
 * What a page's script may say, as a data attribute (escaped like any other): the script has
 * no inline part the CSP would have to allow. `methods` adds their page modules' messages.
 */
function scriptMessages(t: Messages, methods: string[]): string {
  return JSON.stringify(t.under([SCRIPT_MESSAGES, ...methods.map((id) => `method.${id}.js.`)]));
}

function methodChoice(view: LoginView): SafeHtml {
  const options = view.methods.map(
    (m) =>
      html`<label class="choice"
        ><input type="radio" name="method" value="${m.id}" ${m.id === view.preselected ? html` checked` : ''} />
        ${m.label}</label
      >`,
  );
  return html`<fieldset id="gh-methods" ${view.methods.length === 1 ? html` hidden` : ''}>
    <legend>${view.t.t('login.methods')}</legend>
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
    ${chosen ? '' : html` hidden`}
  >
    ${m.help ? html`<p class="note">${m.help}</p>` : ''} ${inputs}
    ${m.link ? html`<p class="note"><a href="${m.link.href}" id="gh-${m.id}-link">${m.link.text}</a></p>` : ''}
  </section>`;
}

/** "Signed in as …": signing out (or starting over) lets someone else sign in to this app. */
function whoLine(view: LoginView): SafeHtml {
  const who = view.who;
  if (!who) return html``;
  const name = html`<strong>${who.name}</strong>`;
  if (who.signOutCsrf) {
    return html`<form class="signed-in" method="post" action="${view.base}/session/end_session">
      <p>
        ${view.t.html('login.signed_in_as', { name })}
        <input type="hidden" name="csrf" value="${who.signOutCsrf}" />
        <input type="hidden" name="request_id" value="${view.requestId}" />
        <button type="submit" name="confirm" value="yes" id="gh-sign-out">${view.t.t('login.sign_out')}</button>
      </p>
    </form>`;
  }
  return html`<p class="signed-in">
    ${view.t.html('login.signing_in_as', { name })}
    ${who.restartUrl ? html`<a href="${who.restartUrl}" id="gh-not-you">${view.t.t('login.not_you')}</a>` : ''}
  </p>`;
}

/** The way back to the app: the app hears that the user cancelled (access_denied). */
function backToApp(view: Pick<LoginView, 'base' | 't' | 'requestId' | 'appName' | 'cancelCsrf'>): SafeHtml {
  if (!view.cancelCsrf) return html``;
  return html`<form class="back" method="post" action="${view.base}/login/cancel">
    <input type="hidden" name="request_id" value="${view.requestId}" />
    <input type="hidden" name="csrf" value="${view.cancelCsrf}" />
    <button type="submit" id="gh-cancel">${view.t.t('login.cancel', { app: view.appName })}</button>
  </form>`;
}

/** The page of the flow's current stage. Inputs have no name: only login.js sends them. */
export function renderLoginPage(view: LoginView): string {
  const t = view.t;
  // With a passkey among the methods, the browser may offer passkeys in the field's autofill.
  const autofill = view.methods.some((m) => m.discoverable) ? 'username webauthn' : 'username';
  const identifier = view.userId
    ? ''
    : html`<div class="field">
        <label for="gh-identifier">${t.t('login.identifier')}</label>
        <input
          id="gh-identifier"
          type="text"
          value="${view.loginHint ?? ''}"
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
    data-messages="${scriptMessages(
      t,
      view.methods.map((m) => m.id),
    )}"
  >
    <p class="step">${t.t('login.step', { step: view.step, steps: view.steps })}</p>
    <h1>${t.t('login.title', { app: view.appName })}</h1>
    ${whoLine(view)}
    <noscript><p class="message error">${t.t('login.noscript')}</p></noscript>
    <form id="gh-form" method="post" novalidate>
      ${identifier} ${methodChoice(view)} ${view.methods.map((m) => methodSection(m, m.id === view.preselected))}
      <p id="gh-message" class="message" aria-live="polite" aria-atomic="true"></p>
      <button type="button" id="gh-send" hidden>${t.t('login.send')}</button>
      <button type="submit" id="gh-submit" class="primary" disabled>${t.t('login.continue')}</button>
    </form>
    <form id="gh-done" method="post" action="${view.base}/login/finish" hidden>
      <input type="hidden" name="requestId" value="${view.requestId}" />
      <input type="hidden" name="status_id" value="" />
      <input type="hidden" name="verificationType" value="" />
      <input type="hidden" name="sub" value="" />
    </form>
    ${view.registerUrl ? html`<p class="register"><a href="${view.registerUrl}" id="gh-register">${t.t('login.register')}</a></p>` : ''}
    ${backToApp(view)}
  </main>`;
  const modules = view.methods.map((m) => m.module).filter((m): m is string => m !== null);
  return layout(view, t.t('login.title', { app: view.appName }), body, 'login', modules);
}

/**
 * After a login: the offer to set a method up for next time. "Not now" (or the button after a
 * setup) continues to the app through a form POST; offer.js runs the method's ceremony.
 */
export function renderOfferPage(
  view: PageContext & {
    requestId: string;
    appName: string;
    method: string;
    offer: { title: string; text: string; accept: string };
    module: string | null;
  },
): string {
  const body = html`<main
    class="card"
    id="gh-offer"
    data-request-id="${view.requestId}"
    data-method="${view.method}"
    data-base="${view.base}"
    data-messages="${scriptMessages(view.t, [view.method])}"
  >
    <h1>${view.offer.title}</h1>
    <p>${view.offer.text}</p>
    <p id="gh-message" class="message" role="status" aria-live="polite"></p>
    <button type="button" id="gh-accept" class="primary">${view.offer.accept}</button>
    <form id="gh-continue" method="post" action="${view.base}/login/offer/done">
      <input type="hidden" name="request_id" value="${view.requestId}" />
      <input type="hidden" name="decision" value="later" id="gh-decision" />
      <button type="submit" id="gh-later" aria-describedby="gh-later-note">
        ${view.t.t('offer.later', { app: view.appName })}
      </button>
    </form>
    <p class="note" id="gh-later-note">${view.t.t('offer.later_note')}</p>
  </main>`;
  return layout(view, view.offer.title, body, 'offer', view.module ? [view.module] : []);
}

/** A page that explains why the login cannot go on, with a way back to the app when there is one. */
export function renderProblemPage(
  view: Pick<LoginView, 'base' | 't' | 'requestId' | 'appName' | 'cancelCsrf'>,
  title: string,
  text: string,
): string {
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${text}</p>
    ${backToApp(view)}
  </main>`;
  return layout(view, title, body, null);
}
