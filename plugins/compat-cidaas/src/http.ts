import type { PluginApi } from '@gatehouse-auth/core';
import type { Request } from 'express';

export type Logger = PluginApi['logger'];

/** What each group of routes adds to the plugin's one router. */
export interface RouteGroupInput {
  api: PluginApi;
  router: ReturnType<PluginApi['services']['http']['createRouter']>;
}

/** Request fields as strings (numbers and booleans as text); empty, repeated or nested ones are left out. */
export function stringFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!body || typeof body !== 'object') return fields;
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string' && value !== '') fields[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = String(value);
  }
  return fields;
}

/** The request's logger (with its request id), else the plugin's. */
export function logOf(req: Request, api: Pick<PluginApi, 'logger'>): Logger {
  return (req as Request & { log?: Logger }).log ?? api.logger;
}
