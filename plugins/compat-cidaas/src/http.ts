import type { PluginApi } from '@gatehouse-auth/core';
import type { Request } from 'express';

export type Logger = PluginApi['logger'];

/** What each group of routes adds to the plugin's one router. */
export interface RouteGroupInput {
  api: PluginApi;
  router: ReturnType<PluginApi['services']['http']['createRouter']>;
}

/** The request's logger (with its request id), else the plugin's. */
export function logOf(req: Request, api: Pick<PluginApi, 'logger'>): Logger {
  return (req as Request & { log?: Logger }).log ?? api.logger;
}
