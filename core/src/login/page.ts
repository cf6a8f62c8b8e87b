import { FORM_POST_JS, LOGIN_CSS, LOGIN_JS } from './assets.js';
import { html, trusted, type SafeHtml } from './html.js';

/** How the page asks for a method's proof: a password, a code at hand, or a code it sends first. */
export type MethodKind = 'password' | 'code' | 'send';

export interface MethodView {
  id: string;
  label: string;
  kind: MethodKind;
  fieldLabel: string;
  inputMode: 'numeric' | 'text' | null;
}

/** The methods the page knows how to drive, with their wording. Others are not offered. */
export const PAGE_METHODS: Record<string, Omit<MethodView, 'id'>> = {
  PASSWORD: { label: 'Password', kind: 'password', fieldLabel: 'Password', inputMode: null },
  TOTP: {
    label: 'Authenticator app',
    kind: 'code',
    fieldLabel: 'Code from your authenticator app',
    inputMode: 'numeric',
  },
  BACKUPCODE: { label: 'Backup code', kind: 'code', fieldLabel: 'Backup code', inputMode: 'text' },
  SMS: { label: 'Text message', kind: 'send', fieldLabel: 'Code from the text message', inputMode: 'numeric' },
  EMAIL: { label: 'Email', kind: 'send', fieldLabel: 'Code from the email', inputMode: 'numeric' },
  IVR: { label: 'Phone call', kind: 'send', fieldLabel: 'Code from the phone call', inputMode: 'numeric' },
};

export interface LoginView {
  /** Path prefix of the issuer ('' at the root), for every URL the browser uses. */
  base: string;
  requestId: string;
  appName: string;
  /** 1-based stage number and the number of stages. */
  step: number;
  steps: number;
  /** The flow's user once a stage identified them; null at the first stage. */
  userId: string | null;
  /** At least one; the first is chosen by default. */
  methods: MethodView[];
  /** This browser's session user, when the flow resumed from it: offered a way out ("Not you?"). */
  signedIn?: { name: string; csrf: string } | null;
}

/** The page skeleton: the shared style sheet and, where the page needs one, its script asset. */
export function layout(base: string, title: string, body: SafeHtml, script: 'login' | 'form-post' | null): string {
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
      </head>
      <body>
        ${body}
      </body>
    </html> `.value;
}

function methodChoice(methods: MethodView[]): SafeHtml {
  const options = methods.map(
    (m, i) =>
      html`<label class="choice"
        ><input
          type="radio"
          name="method"
          value="${m.id}"
          data-kind="${m.kind}"
          data-label="${m.fieldLabel}"
          data-inputmode="${m.inputMode ?? ''}"
          ${i === 0 ? trusted(' checked') : ''}
        />
        ${m.label}</label
      >`,
  );
  return html`<fieldset id="gh-methods" ${methods.length === 1 ? trusted(' hidden') : ''}>
    <legend>Verify with</legend>
    ${options}
  </fieldset>`;
}

function secretField(first: MethodView): SafeHtml {
  const isPassword = first.kind === 'password';
  return html`<div class="field" id="gh-secret-row" ${first.kind === 'send' ? trusted(' hidden') : ''}>
    <label id="gh-secret-label" for="gh-secret">${first.fieldLabel}</label>
    <input
      id="gh-secret"
      type="${isPassword ? 'password' : 'text'}"
      autocomplete="${isPassword ? 'current-password' : 'one-time-code'}"
      ${first.inputMode ? html` inputmode="${first.inputMode}"` : ''}
      autocapitalize="off"
      spellcheck="false"
      aria-describedby="gh-message"
    />
  </div>`;
}

/** "Signed in as …": signing out starts this sign-in again from its first stage, for someone else. */
function signedInAs(view: LoginView, who: { name: string; csrf: string }): SafeHtml {
  return html`<form class="signed-in" method="post" action="${view.base}/session/end_session">
    <p>
      Signed in as <strong>${who.name}</strong>.
      <input type="hidden" name="csrf" value="${who.csrf}" />
      <input type="hidden" name="request_id" value="${view.requestId}" />
      <button type="submit" name="confirm" value="yes" id="gh-sign-out">Not you? Sign out</button>
    </p>
  </form>`;
}

/** The page of the flow's current stage. Credential inputs have no name: only login.js sends them. */
export function renderLoginPage(view: LoginView): string {
  const first = view.methods[0]!;
  const identifier = view.userId
    ? ''
    : html`<div class="field">
        <label for="gh-identifier">Username, email or phone</label>
        <input
          id="gh-identifier"
          type="text"
          autocomplete="username"
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
    ${view.signedIn ? signedInAs(view, view.signedIn) : ''}
    <noscript><p class="message error">This page needs JavaScript to sign you in.</p></noscript>
    <form id="gh-form" method="post" novalidate>
      ${identifier} ${methodChoice(view.methods)} ${secretField(first)}
      <p id="gh-message" class="message" aria-live="polite" aria-atomic="true"></p>
      <button type="button" id="gh-send" ${first.kind === 'send' ? trusted(' class="primary"') : trusted(' hidden')}>
        Send code
      </button>
      <button type="submit" id="gh-submit" class="primary" disabled${first.kind === 'send' ? trusted(' hidden') : ''}>
        Continue
      </button>
    </form>
    <form id="gh-done" method="post" action="${view.base}/login-srv/verification/login" hidden>
      <input type="hidden" name="requestId" value="${view.requestId}" />
      <input type="hidden" name="status_id" value="" />
      <input type="hidden" name="verificationType" value="" />
      <input type="hidden" name="sub" value="" />
    </form>
  </main>`;
  return layout(view.base, `Sign in to ${view.appName}`, body, 'login');
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
