/** The smallest fakes, shared by the rest of the testing kit: a logger, a clock, a user, a request. */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Clock, RequestFacts, UserRecord } from '@gatehouse-auth/core';

export const silentLogger: Logger = pino({ level: 'silent' });

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  constructor(private current = new Date('2026-01-01T12:00:00Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date): void {
    this.current = new Date(date);
  }
  advance(seconds: number): void {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}

export function fakeUser(overrides: Partial<UserRecord> = {}): UserRecord {
  return {
    id: randomUUID(),
    username: 'alice',
    email: 'alice@example.test',
    phone: '+15551230000',
    status: 'active',
    ...overrides,
  };
}

export function fakeRequest(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return {
    ip: '203.0.113.10',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
    acceptLanguage: 'en-US,en;q=0.9',
    deviceId: null,
    deviceKey: null,
    requestId: randomUUID(),
    ...overrides,
  };
}
