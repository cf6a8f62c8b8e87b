import type { Services } from '@gatehouse-auth/plugin-api';
import type { ClientRegistry } from '../oauth/clients.js';
import { safeEqual } from '../util/crypto.js';
import type { LoginFlow } from '../verification/flows.js';

/**
 * Where an app's own login UI (apps[i].login_page_url, cidaas-style) shows a flow: its URL with
 * `requestId`, `view_type`, the request's `ui_locales` and `login_hint` and, once the user is known, `sub` (what such a UI needs to start
 * the next stage's methods) and `track_id` (what lets it set a missing method up: decision 34, `loginFlows.byTrackId`);
 * `extra` adds `error` and `error_description` after a failed form POST. Null when the app uses
 * the hosted page.
 */
export class LoginUi {
  constructor(
    private readonly clients: ClientRegistry,
    private readonly services: Pick<Services, 'secrets'>,
  ) {}

  /**
   * The track id of the flow at its current stage: the flow id and a MAC of it and its stage
   * under the server key, so it names one login at one stage and dies when the stage moves on.
   */
  trackId(flow: Pick<LoginFlow, 'id' | 'stage'>): string {
    return `${flow.id}.${this.trackMac(flow)}`;
  }

  /** Whether `trackId` is the flow's at its current stage. */
  isTrackOf(trackId: string, flow: Pick<LoginFlow, 'id' | 'stage'>): boolean {
    const [flowId = '', mac = ''] = trackId.split('.');
    return flowId === flow.id && safeEqual(mac, this.trackMac(flow));
  }

  private trackMac(flow: Pick<LoginFlow, 'id' | 'stage'>): string {
    return this.services.secrets.mac(`login-setup:${flow.id}:${flow.stage}`);
  }

  url(flow: LoginFlow, extra: Record<string, string> = {}): string | null {
    const page = this.clients.get(flow.clientId)?.loginPageUrl;
    if (!page) return null;
    const url = new URL(page);
    url.searchParams.set('requestId', flow.id);
    url.searchParams.set('view_type', 'login');
    const oauth = flow.params.oauth as { ui_locales?: unknown; login_hint?: unknown } | undefined;
    if (typeof oauth?.ui_locales === 'string' && oauth.ui_locales) url.searchParams.set('ui_locales', oauth.ui_locales);
    // Only until someone is known: after that the UI shows who signs in, not what the app guessed.
    if (typeof oauth?.login_hint === 'string' && !flow.userId) url.searchParams.set('login_hint', oauth.login_hint);
    if (flow.userId) {
      url.searchParams.set('sub', flow.userId);
      if (flow.status === 'active') url.searchParams.set('track_id', this.trackId(flow));
    }
    for (const [name, value] of Object.entries(extra)) url.searchParams.set(name, value);
    return url.toString();
  }
}
