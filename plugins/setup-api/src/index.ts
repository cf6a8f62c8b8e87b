import { definePlugin, routeInput, z, type MethodSetup, type PluginApi, answerSuccess } from '@gatehouse-auth/core';
import type { Request } from 'express';
import { SETUP_MOUNT, setupApi, type SetupStep } from './api.js';

export { SETUP_MOUNT, setupApi } from './api.js';

/**
 * The self-service setup API (decision 70): setting a user's methods up, step by step, listing,
 * renaming and removing them, for the admin token with the user named in `sub` or the user's own
 * access token from a recent login (`web.setup.access`, which keeps the caller check in the
 * core). The operations are @gatehouse-auth/management's `methodSetup` (decision 81), which keeps
 * the pending setup and its wrong-code limit. Left out of `plugins:`, its paths answer 404.
 */
export default definePlugin({
  name: '@gatehouse-auth/setup-api',
  apiVersion: '^1.3',
  dependencies: ['@gatehouse-auth/management'],
  options: z.strictObject({}),
  register(api: PluginApi) {
    const { web } = api;
    const setup = () => api.services.resolve<MethodSetup>('methodSetup');
    const router = api.services.http.createRouter();
    const json = api.services.http.json();
    const form = api.services.http.form();
    // The declarations name the registered methods' files and codes: made once every plugin registered.
    let declared: ReturnType<typeof setupApi> | undefined;
    const spec = () => (declared ??= setupApi(web.methods()));
    const method = (req: Request) => String(req.params.method);

    // A confirmation without a bearer: the exchange_id of the setup in progress names the user.
    router.post('/:method/verification', json, form, async (req, res, next) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (req.headers.authorization || typeof body.exchange_id !== 'string') return next('route');
      answerSuccess(res, await setup().confirm(method(req), routeInput(spec().verification, req).body, req));
    });
    const { admit } = web.setup;
    for (const name of ['initiation', 'scan', 'verification'] as const satisfies readonly SetupStep[]) {
      // The caller is admitted before the body is read; a multipart one (a face photo) with the method's limits.
      router.post(`/:method/${name}`, admit, json, form, async (req, res) => {
        const { body } = routeInput(spec()[name], req);
        const { user } = await web.setup.access(req, res, body.sub);
        answerSuccess(res, await setup().step(name, method(req), user, body, req));
      });
    }
    router.get('/users/:sub/methods', admit, async (req, res) => {
      const { user } = await web.setup.access(req, res, req.params.sub);
      routeInput(spec().list, req);
      answerSuccess(res, await setup().list(user, req));
    });
    // Renaming one credential (a passkey, a phone): only its label changes.
    router.patch('/users/:sub/methods/:method/:credentialId', admit, json, async (req, res) => {
      const { user } = await web.setup.access(req, res, req.params.sub);
      const { params, body } = routeInput(spec().rename, req);
      await setup().rename(user, params.method, params.credentialId, body.name);
      answerSuccess(res, { id: params.credentialId, name: body.name });
    });
    router.delete('/users/:sub/methods/:method{/:credentialId}', admit, async (req, res) => {
      const { user } = await web.setup.access(req, res, req.params.sub);
      const { params } = routeInput(spec().remove, req);
      answerSuccess(res, { removed: await setup().remove(user, params.method, params.credentialId) });
    });

    api.routes.add({ path: SETUP_MOUNT, router, operations: () => Object.values(spec()) });
  },
});
