import { tool } from 'ai';
import { z } from 'zod';
import type { MockTurn } from '../../test-support/mock-model.ts';

/** A model stuck on one status poll whose answer never changes. */
export const stuckOnStatus = (): MockTurn[] => Array.from({ length: 12 }, () => ({ toolCalls: [{ name: 'get_status', input: { job: 'build' } }] }));

/** The status poll it is stuck on: always 'queued'. */
export const getStatus = tool({ inputSchema: z.object({ job: z.string() }), execute: async () => 'queued' });
