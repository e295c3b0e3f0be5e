import { runDemo } from '../../demo/run-demo.ts';
import { MissingDependencyError } from '../../errors/missing-dependency-error.ts';
import { EXIT_CODES, type CliCommand } from '../cli-command.ts';
import { writeCommandError } from '../command-error.ts';

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'run the main job: MiniAgent on a bundled task with the breaker (no key needed)',
  usage: `Usage: governor demo

Runs MiniAgent with the AgentBreaker on a small bundled bug-fix task, then the
same agent under a plain step cap, and compares the two. Without a model key it
runs on the scripted stand-in, a local fake model served over HTTP. With
OPENAI_API_KEY, ANTHROPIC_API_KEY or GOVERNOR_BASE_URL + GOVERNOR_MODEL set it
runs that model instead.

Progress goes to stderr, the summaries to stdout.`,
  async run(argv, io) {
    if (argv.length > 0) {
      // Quoted through writeCommandError: an argument may be a pasted key or carry terminal escapes.
      writeCommandError(io, 'demo', `takes no arguments, got: ${argv.join(' ')}`);
      return EXIT_CODES.usage;
    }
    try {
      return await runDemo(io);
    } catch (error) {
      // The provider package of the model the environment names: installed, the same command runs, as with governor run.
      if (!MissingDependencyError.isInstance(error)) throw error;
      writeCommandError(io, 'demo', error);
      return EXIT_CODES.usage;
    }
  },
};
