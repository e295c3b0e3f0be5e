import { REPLAY_USAGE, runReplayCommand } from '../../replay/replay-command.ts';
import type { CliCommand } from '../cli-command.ts';

export const replayCommand: CliCommand = {
  name: 'replay',
  summary: 'audit recorded trajectories (JSON Lines, or - for stdin) with the breaker',
  usage: REPLAY_USAGE,
  run: runReplayCommand,
};
