import { CORE_VERSION, definePlugin, z } from '@gatehouse-auth/core';
import { openApiDocument } from './document.js';
import { renderReference } from './reference.js';
import { OPENAPI_PATH, OPENAPI_ROUTE, REFERENCE_PATH } from './route.js';

export { openApiDocument, jsonSchema, SECURITY_SCHEMES, type DocumentInfo } from './document.js';
export { renderReference } from './reference.js';
export { OPENAPI_PATH, OPENAPI_ROUTE, REFERENCE_PATH } from './route.js';

const CACHE = 'public, max-age=300';

/**
 * The published API description (decision 59): the OpenAPI 3.1 document of every JSON operation
 * the server answers, the core's and every plugin's, at /openapi.json, and the same as an HTML
 * reference at /openapi. Both public: they hold no secret.
 */
export default definePlugin({
  name: '@gatehouse-auth/openapi',
  apiVersion: '^1.3',
  options: z.strictObject({}),
  register(api) {
    const { web } = api;
    // Built at the first request: the declarations are complete only once the server is. The
    // core checked them at start-up (unknown codes, paths declared twice stop the boot).
    let doc: Record<string, unknown> | undefined;
    const document = () => (doc ??= openApiDocument(web.routeSpecs(), { issuer: web.issuer, version: CORE_VERSION }));
    const base = web.base;

    const json = api.services.http.createRouter();
    json.get('', (_req, res) => {
      res.set('Cache-Control', CACHE).json(document());
    });
    const page = api.services.http.createRouter();
    page.get('', (_req, res) => {
      web.headers(res);
      // Unlike the login pages, the reference holds nothing private.
      res.set('Cache-Control', CACHE);
      res.send(renderReference(document(), base));
    });
    api.routes.add({ path: OPENAPI_PATH, router: json, operations: [OPENAPI_ROUTE] });
    api.routes.add({ path: REFERENCE_PATH, router: page });
    // An app's developer portal renders the document from its own origin.
    api.cors([OPENAPI_PATH]);
  },
});
