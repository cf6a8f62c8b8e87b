import type { Messages } from './messages.js';

/** What the core tells plugins of logins, sessions and pages. */

/** One method a user completed: which, its RFC 8176 values, and when (epoch seconds). */
export interface MethodCompletion {
  method: string;
  amr: string[];
  at: number;
  /** It completed the whole login alone (a single-factor method the app allows so). */
  alone?: boolean;
}

/**
 * Since plugin API 1.3: what a page shows of a brand (`api.web.brand`). Every member is null
 * where nothing is configured, and the page looks as without branding.
 */
export interface Brand {
  /** The product name. */
  readonly title: string | null;
  /** The logo's `src` (this server's path for a file). */
  readonly logo: string | null;
  /** The origin a logo URL needs in CSP img-src; null for a file or no logo. */
  readonly imageSource: string | null;
  /** The style sheet that sets the primary color (`--accent`), this server's path. */
  readonly stylesheet: string | null;
  readonly supportUrl: string | null;
  readonly docsUrl: string | null;
}

export const NO_BRAND: Brand = {
  title: null,
  logo: null,
  imageSource: null,
  stylesheet: null,
  supportUrl: null,
  docsUrl: null,
};

/**
 * Since plugin API 1.3: the `branding` service, which the pages ask for their brand
 * (`web.brand`). The core's answers `NO_BRAND` for every page; `@gatehouse-auth/branding`
 * provides one from its options and the apps' `branding` keys (decision 65).
 */
export interface Branding {
  /** The brand of an app's pages (its keys over the global ones), or with no app the global brand. */
  of(clientId?: string | null): Brand;
}

/** Who signed in through a login a plugin started, and how (what a browser session keeps). */
export interface HostedLoginResult {
  userId: string;
  amr: string[];
  /** Epoch seconds. */
  authTime: number;
  methods: MethodCompletion[];
  /** The browser session the login made or renewed. */
  sid: string;
}

/** What a login a plugin starts is for. */
export interface HostedLoginInput {
  clientId: string;
  returnTo: string;
  /** Since plugin API 1.3: how recent (seconds) the session's factors must be to count, like OIDC `max_age`. */
  maxAge?: number;
  /**
   * Since plugin API 1.3: the login is for this user, known from its start as if a first stage
   * had named them (account recovery's second factor): no single sign-on, every stage of the
   * app is done anew in this login, and only by this user.
   */
  userId?: string;
}

/** What an ID token we issued says, once its signature checked out (`web.logout.idTokenHint`). */
export interface IdTokenHint {
  sub: string;
  /** Since 1.3: the app the token was issued to (`azp`, else its one audience; OIDC Core §2). */
  clientId: string;
  clientIds: string[];
  sid: string | null;
}

/** A browser's login (SSO): who, when and with which methods. */
export interface Session {
  /** The row id: the SHA-256 of the cookie, renewed after every login step. */
  key: string;
  /** The session as apps know it (`sid` in ID and logout tokens); kept across step-ups. */
  sid: string;
  userId: string;
  authTime: number;
  amr: string[];
  /**
   * The methods completed, each with its time: what decides whether the session satisfies
   * another app's login stages. Empty for sessions made before they were kept (they satisfy none).
   */
  methods: MethodCompletion[];
  createdAt: Date;
  expiresAt: Date;
}

/** What every page is rendered with: the issuer's path and the messages of the page's locale. */
export interface PageContext {
  /** Path prefix of the issuer ('' at the root), for every URL the browser uses. */
  base: string;
  t: Messages;
  /**
   * Since 1.3: the page's brand (`api.web.brand`): its product name, logo, color and support
   * link. Give the same brand to `web.headers`, whose CSP must allow a logo URL's origin.
   */
  brand?: Brand;
}

/** Who did it, for the audit event (`<via>.<action>`): an admin of the console, a user on the account page. */
export interface Actor {
  via: string;
  userId: string;
  ip: string | null;
}

/** A method as the pages name it, in the request's language: its label, and its renewal if it has one. */
export interface MethodInfo {
  label: string;
  renew: { text: string; button: string } | null;
}
