/**
 * The parts of autocannon and oidc-provider the benchmark uses; neither package ships types
 * and their @types packages are not installed.
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    total: number;
  }

  export interface Result {
    duration: number;
    connections: number;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
  }

  export type Context = Record<string, unknown>;

  export interface RawRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface RequestSpec extends RawRequest {
    setupRequest?: (request: RawRequest, context: Context) => RawRequest | null | undefined;
    onResponse?: (status: number, body: string, context: Context, headers: Record<string, string>) => void;
  }

  export interface Options extends RawRequest {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    requests?: RequestSpec[];
    initialContext?: Context;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(options: Options, callback: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}

declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Model {
    save(): Promise<string>;
  }
  export interface GrantModel extends Model {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
  }
  export interface ClientModel {
    clientId: string;
  }
  export interface ProviderInstance {
    Grant: new (props: { accountId: string; clientId: string }) => GrantModel;
    AuthorizationCode: new (props: Record<string, unknown>) => Model;
    Client: { find(id: string): Promise<ClientModel | undefined> };
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
  const Provider: new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;
  export default Provider;
}

/** The peer's in-memory adapter store: the bench raises its size (see bench/peer-server.ts). */
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  export default class MemoryAdapter {
    constructor(model: string, store: unknown, clockTolerance?: number);
  }
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}
