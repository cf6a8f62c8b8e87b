import {
  DEVICE_API_PATHS,
  PUSH_STEP_NAMES,
  definePlugin,
  html,
  pageContext,
  pageLayout,
  renderErrorPage,
  z,
  type PageContext,
  answerSuccess,
} from '@gatehouse-auth/core';
import type { Request, RequestHandler, Response } from 'express';
import { DEVICE_API, DEVICE_MOUNT, SETUP_DEVICE_API, SETUP_MOUNT } from './api.js';

export { DEVICE_API, DEVICE_MOUNT, SETUP_DEVICE_API, SETUP_MOUNT } from './api.js';

const isStep = (step: string) => (PUSH_STEP_NAMES as readonly string[]).includes(step);

/**
 * The device API's routes (docs/devices.md, decision 69): an authenticator app's binding, its
 * inbox and its signed push steps, the user's devices in the setup API, and the page the binding
 * link opens in a browser. Each call is the core's `web.devices` operation, which runs every
 * check (the body, the Device-Proof, the push's state): this plugin only routes. The device
 * methods (PUSH, TOUCHID, PATTERN, FACE) depend on it, so start-up names it when it is missing.
 */
export default definePlugin({
  name: '@gatehouse-auth/devices-api',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api) {
    const { web, services } = api;
    const { devices } = web;
    const json = services.http.json({ limit: '16kb' });

    // The device's calls, each signed by it.
    const device = services.http.createRouter();
    device.post(DEVICE_API.bind.path, json, async (req, res) => answerSuccess(res, await devices.bind(req, req.body)));
    device.post(DEVICE_API.inbox.path, json, async (req, res) =>
      answerSuccess(res, await devices.inbox(req, req.body)),
    );
    device.post(DEVICE_API.pushStep.path, json, async (req, res, next) => {
      const step = String(req.params.step);
      if (!isStep(step)) return next();
      answerSuccess(res, await devices.pushStep(req, String(req.params.method), step, req.body));
    });
    api.routes.add({ path: DEVICE_MOUNT, router: device, operations: Object.values(DEVICE_API) });

    // The user's devices in the setup API: the admin token or the user's own recent token.
    const setup = services.http.createRouter();
    const access: RequestHandler = async (req, res, next) => {
      res.locals.deviceUser = (await web.setup.access(req, res, req.params.sub)).user;
      next();
    };
    const userOf = (res: Response) => res.locals.deviceUser as Parameters<typeof devices.list>[0];
    const deviceId = (req: Request) => String(req.params.deviceId);
    setup.get(SETUP_DEVICE_API.list.path, access, async (_req, res) =>
      answerSuccess(res, await devices.list(userOf(res))),
    );
    setup.patch(SETUP_DEVICE_API.rename.path, access, json, async (req, res) =>
      answerSuccess(res, await devices.rename(userOf(res), deviceId(req), req.body)),
    );
    setup.delete(SETUP_DEVICE_API.remove.path, access, async (req, res) => {
      await devices.remove(userOf(res), deviceId(req));
      answerSuccess(res, { removed: true });
    });
    api.routes.add({ path: SETUP_MOUNT, router: setup, operations: Object.values(SETUP_DEVICE_API) });

    // The link in the QR code, opened in a browser instead of the app: say what it is for, and
    // show its QR code to scan from here (a live code only: a dead one says so, 410).
    const [mount, route] = splitLast(DEVICE_API_PATHS.bindingLink);
    const page = services.http.createRouter();
    page.get(route, async (req, res) => {
      const live = await devices.bindingLink(req.query.code);
      res.status(live ? 200 : 410).send(bindingLinkPage(pageContext(web, req, res), live));
    });
    api.routes.add({ path: mount, router: page });
  },
});

/** `/devices/bind` → `['/devices', '/bind']`. */
function splitLast(path: string): [string, string] {
  const at = path.lastIndexOf('/');
  return [path.slice(0, at), path.slice(at)];
}

/**
 * The binding link opened in a browser instead of the app: its QR code, to scan with the app
 * from here, and the link as text to copy; for a code that is no longer live, a page saying so.
 * The texts are the core's catalogs' (`device_link.…`).
 */
function bindingLinkPage(page: PageContext, live: { link: string; qr: string } | null): string {
  const t = page.t;
  if (!live) return renderErrorPage(page, t.t('device_link.expired.title'), t.t('device_link.expired.text'));
  const title = t.t('device_link.title');
  const body = html`<main class="card">
    <h1>${title}</h1>
    <p>${t.t('device_link.text')}</p>
    <p class="qr"><img id="gh-qr" src="${live.qr}" alt="${t.t('device_link.qr_alt')}" width="240" height="240" /></p>
    <p class="note" id="gh-binding-link-label">${t.t('device_link.copy')}</p>
    <p><code class="copy" id="gh-binding-link" aria-labelledby="gh-binding-link-label">${live.link}</code></p>
  </main>`;
  return pageLayout(page, title, body, null);
}
