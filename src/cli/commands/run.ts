import type { CliCommand } from '../cli-command.ts';
import { RUN_USAGE, runRunCommand } from '../run-command.ts';

export const runCommand: CliCommand = {
  name: 'run',
  summary: 'run MiniAgent on a task of yours, in a directory, on a model you name',
  usage: RUN_USAGE,
  run: runRunCommand,
};
