import { defineRoute, html, type RouteSpec, type SafeHtml } from '@gatehouse-auth/plugin-api';
import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import { z } from 'zod';
import { BootError } from '../errors.js';
import { pageHeaders } from '../login/headers.js';
import { openApiDocument, type DocumentInfo } from './api-spec.js';

export const OPENAPI_PATH = '/openapi.json';

/** The core package's version: the document's `info.version`, the traces' `service.version`. */
export const CORE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
export const REFERENCE_PATH = '/openapi';

/** The document describes itself too. */
export const OPENAPI_ROUTE = defineRoute({
  id: 'openApiDocument',
  method: 'get',
  path: OPENAPI_PATH,
  summary: 'This OpenAPI 3.1 document',
  description:
    'Generated from the schemas that validate the requests, the plugins’ included. Public: it holds no secret.',
  tag: 'meta',
  response: {
    description: 'the OpenAPI document',
    schema: z.object({ openapi: z.string() }).loose(),
    raw: true,
    cache: 'public, max-age=300',
  },
  errors: [],
});

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  summary: string;
  description?: string;
  security: Record<string, unknown>[];
  parameters?: { name: string; in: string; required: boolean; description?: string; schema: Json }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { description: string }>;
};

/** A short type for a parameter's schema: `string`, `integer`, `TOTP | SMS`. */
function typeOf(schema: Json): string {
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).join(' | ');
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  return typeof schema.type === 'string' ? schema.type : 'any';
}

function operationHtml(method: string, path: string, op: Operation): SafeHtml {
  const security = op.security.flatMap((s) => Object.keys(s));
  return html`<section id="${op.operationId}">
    <h2><code>${method.toUpperCase()} ${path}</code></h2>
    <p>${op.summary}</p>
    ${op.description ? html`<p>${op.description}</p>` : ''}
    <p>Authentication: ${security.length ? security.join(' or ') : 'none'}</p>
    ${
      op.parameters?.length
        ? html`<table>
            <tr>
              <th>Parameter</th>
              <th>In</th>
              <th>Type</th>
              <th>Required</th>
              <th>Description</th>
            </tr>
            ${op.parameters.map(
              (p) =>
                html`<tr>
                  <td><code>${p.name}</code></td>
                  <td>${p.in}</td>
                  <td>${typeOf(p.schema)}</td>
                  <td>${p.required ? 'yes' : 'no'}</td>
                  <td>${p.description ?? ''}</td>
                </tr>`,
            )}
          </table>`
        : ''
    }
    ${
      op.requestBody
        ? Object.entries(op.requestBody.content).map(
            ([type, { schema }]) =>
              html`<h3>Body: ${type}</h3>
                <pre>${JSON.stringify(schema, null, 2)}</pre>`,
          )
        : ''
    }
    <h3>Responses</h3>
    <table>
      <tr>
        <th>Status</th>
        <th>Description (error codes)</th>
      </tr>
      ${Object.entries(op.responses).map(
        ([status, r]) =>
          html`<tr>
            <td>${status}</td>
            <td>${r.description}</td>
          </tr>`,
      )}
    </table>
  </section>`;
}

/** The reference page: the same document as plain HTML, rendered here (no script: the CSP of the pages). */
export function renderReference(doc: Json, base: string): string {
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const page = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Gatehouse API reference</title>
        <link rel="stylesheet" href="${base}/login/assets/login.css" />
      </head>
      <body>
        <main>
          <h1>Gatehouse API reference</h1>
          <p>The machine-readable form: <a href="${base}${OPENAPI_PATH}">${OPENAPI_PATH}</a> (OpenAPI 3.1).</p>
          <ul>
            ${operations.map(
              ({ path, method, op }) =>
                html`<li>
                  <a href="#${op.operationId}"><code>${method.toUpperCase()} ${path}</code></a> ${op.summary}
                </li>`,
            )}
          </ul>
          ${operations.map(({ path, method, op }) => operationHtml(method, path, op))}
        </main>
      </body>
    </html>`;
  return page.value;
}

/** `/openapi.json` and its reference page, built once from the declared routes. */
export function openApiRoutes(deps: { routes: readonly RouteSpec[]; info: DocumentInfo; issuerPath: string }): Router {
  // Built at start-up: a declaration naming an unknown error code or a path twice stops the boot.
  let doc: Json;
  try {
    doc = openApiDocument([OPENAPI_ROUTE, ...deps.routes], deps.info);
  } catch (err) {
    throw new BootError('API_SPEC_INVALID', `the API declarations are inconsistent: ${(err as Error).message}`);
  }
  const document = () => doc;
  const router = express.Router();
  router.get(OPENAPI_PATH, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(document());
  });
  router.get(REFERENCE_PATH, (_req, res) => {
    pageHeaders(res);
    // Unlike the login pages, the reference holds nothing private.
    res.set('Cache-Control', 'public, max-age=300');
    res.send(renderReference(document(), deps.issuerPath));
  });
  return router;
}
