import { html, type SafeHtml } from '@gatehouse-auth/core';
import { OPENAPI_PATH } from './route.js';

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

/**
 * The reference page: the same document as plain HTML, rendered here (no script: the CSP of the
 * hosted pages). Every text from the declarations goes through `html`, which escapes it.
 */
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
