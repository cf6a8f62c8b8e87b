import type { Branding } from '@gatehouse-auth/plugin-api';
import express, { type Request, type Router } from 'express';
import { ok } from '../http/envelope.js';
import { jsonBody } from '../http/parsers.js';
import { pageHeaders } from '../login/headers.js';
import type { Locales } from '../i18n/locales.js';
import { requestFacts, stringFields } from '../verification/context.js';
import { verificationError } from '../verification/errors.js';
import type { VerificationService } from '../verification/service.js';
import { setupAccess } from '../verification/setup-access.js';
import { BINDING_LINK_PATH, type DeviceBinding } from './binding.js';
import { renderBindingLinkPage } from './link-page.js';
import { PROOF_HEADER } from './proof.js';
import { routeInput } from '../http/api-spec.js';
import { BIND_PATH, DEVICE_API, DEVICES_PATH, INBOX_PATH, type BindBody } from './api.js';
import { PUSH_STEPS, type DevicePushes, type DeviceRequest, type PushStep } from './pushes.js';
import { publicDevice, type DeviceStore } from './store.js';

/** What the routes use, and what the setup API's access check uses. */
export type DeviceRouteDeps = Parameters<typeof setupAccess>[0] & {
  issuerPath: string;
  devices: DeviceStore;
  deviceBinding: DeviceBinding;
  pushes: DevicePushes;
  verification: VerificationService;
  locales: Locales;
  /** The deployment's brand on the binding link's page (it belongs to no one app). */
  branding: Pick<Branding, 'of'>;
};

const json = jsonBody('16kb');

/** A device's request: its fields, its proof and the public path the proof must name. */
export function deviceRequest(req: Request, issuerPath: string): DeviceRequest {
  return {
    fields: stringFields(req.body).fields,
    files: [],
    proof: req.get(PROOF_HEADER),
    path: issuerPath + req.path,
    request: requestFacts(req),
  };
}

/**
 * The device API (docs/devices.md): binding, the inbox and the push steps, each signed by the
 * device; and the user's devices in the setup API.
 */
export function deviceRoutes(deps: DeviceRouteDeps): Router {
  const router = express.Router();
  const { requireSetupAccess, userOf } = setupAccess(deps);

  router.post(BIND_PATH, json, async (req, res) => {
    routeInput(DEVICE_API.bind, req);
    // The body as it came (the schema only checked it): the device's signature covers it.
    const body = req.body as BindBody;
    const path = deps.issuerPath + req.path;
    ok(res, await deps.deviceBinding.complete(body, req.get(PROOF_HEADER), path, requestFacts(req)));
  });

  // The link in the QR code, opened in a browser instead of the app: say what it is for, and
  // show its QR code to scan from here (a live code only: a dead one says so, 410).
  router.get(BINDING_LINK_PATH, async (req, res) => {
    const brand = deps.branding.of(null);
    const page = { base: deps.issuerPath, t: deps.locales.for(req), brand };
    const live = await deps.deviceBinding.linkOf(req.query.code);
    pageHeaders(res, [], 'no-referrer', brand);
    res.status(live ? 200 : 410).send(renderBindingLinkPage(page, live));
  });

  router.post(INBOX_PATH, json, async (req, res) => {
    routeInput(DEVICE_API.inbox, req);
    ok(res, await deps.pushes.inbox(deviceRequest(req, deps.issuerPath)));
  });

  router.post('/verification-srv/authentication/:method/push/:step', json, async (req, res, next) => {
    const step = String(req.params.step);
    if (!Object.hasOwn(PUSH_STEPS, step)) return next();
    routeInput(DEVICE_API.pushStep, req);
    const { keys } = stringFields(req.body);
    const request = { ...deviceRequest(req, deps.issuerPath), keys, logger: req.log };
    ok(res, await deps.verification.pushStep(String(req.params.method), step as PushStep, request));
  });

  router.get(DEVICES_PATH, requireSetupAccess, async (req, res) => {
    const user = await userOf(routeInput(DEVICE_API.list, req).params.sub, res);
    ok(res, (await deps.devices.ofUser(user.id)).map(publicDevice));
  });

  router.patch(`${DEVICES_PATH}/:deviceId`, requireSetupAccess, json, async (req, res) => {
    const user = await userOf(req.params.sub, res);
    const { name } = routeInput(DEVICE_API.rename, req).body;
    if (!(await deps.devices.rename(user.id, String(req.params.deviceId), name)))
      throw verificationError('DEVICE_NOT_FOUND');
    ok(res, { device_id: String(req.params.deviceId), name });
  });

  router.delete(`${DEVICES_PATH}/:deviceId`, requireSetupAccess, async (req, res) => {
    const user = await userOf(routeInput(DEVICE_API.remove, req).params.sub, res);
    const deviceId = String(req.params.deviceId);
    if (!(await deps.devices.remove(user.id, deviceId))) throw verificationError('DEVICE_NOT_FOUND');
    // Its pushes end now (the login pages waiting on them learn it), and, as for any removed
    // sign-in method, the user's sessions and tokens end with it.
    await deps.pushes.endPushesOf(deviceId);
    await deps.enrollment.afterRemoval(user.id, 'device.removed', { device_id: deviceId });
    ok(res, { removed: true });
  });

  return router;
}
