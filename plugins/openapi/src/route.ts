import { defineRoute, z } from '@gatehouse-auth/core';

export const OPENAPI_PATH = '/openapi.json';
export const REFERENCE_PATH = '/openapi';

/** The document describes itself too (the path is the mount path itself). */
export const OPENAPI_ROUTE = defineRoute({
  id: 'openApiDocument',
  method: 'get',
  path: '',
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
