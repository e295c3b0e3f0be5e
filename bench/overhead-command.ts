/**
 * `npm run bench:overhead [-- FLAGS]`: the overhead benchmark alone (see
 * overhead.ts): the AgentBreaker's cost per event and memory per session with
 * every detector on, the same through RedisBreakerStore on a local Redis, and
 * the ChatClient + advisors against a bare doGenerate, breaker state under
 * contention on Redis (contention.ts), what texts made to be expensive cost
 * (adversarial-text.ts), and the latency `governor proxy` adds
 * per request and per streamed chunk (proxy-overhead.ts). Prints the machine and
 * aligned tables; each table says which goal it checks and whether it is met.
 * Takes a minute or two.
 *
 * Redis: the test server (GOVERNOR_TEST_REDIS_URL, default redis://127.0.0.1:6390).
 * When it does not answer, scripts/test-services.ts is run to start it; when
 * that fails too, the Redis rows are skipped and the report says why.
 *
 * Flags:
 *   --json          print the figures as one JSON document instead of the tables
 *   --json FILE     write that JSON document to FILE and print the tables as usual
 *   --quick         small sizes (sessions of 10 and 200 events, fewer calls): a smoke run of a few seconds
 *   --no-redis      skip the Redis rows
 *   --no-start      do not try to start Redis when it does not answer
 *   --help          this text
 *
 * Progress goes to stderr, the report to stdout.
 */
import fs from 'node:fs';
import { testRedisUrl } from '../src/test-support/services.ts';
import { formatAdversarialText, measureAdversarialText } from './adversarial-text.ts';
import { formatContentionReport, runContentionBenchmark } from './contention.ts';
import { DEFAULT_REDIS_SCALE, formatOverheadReport, measureRedisScale, runOverheadBenchmark, type OverheadBenchmarkOptions } from './overhead.ts';
import { formatProxyOverhead, measureProxyOverhead } from './proxy-overhead.ts';

const USAGE = 'usage: npm run bench:overhead [-- [--json [FILE]] [--quick] [--no-redis] [--no-start]]';

interface Flags {
  json: boolean;
  jsonFile: string | undefined;
  quick: boolean;
  redis: boolean;
  start: boolean;
}

function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { json: false, jsonFile: undefined, quick: false, redis: true, start: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') {
      flags.json = true;
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        flags.jsonFile = next;
        i++;
      }
    } else if (arg === '--quick') flags.quick = true;
    else if (arg === '--no-redis') flags.redis = false;
    else if (arg === '--no-start') flags.start = false;
    else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      console.error(`unknown argument: ${arg}\n${USAGE}`);
      process.exit(2);
    }
  }
  return flags;
}

const flags = parseFlags(process.argv.slice(2));
const quick: OverheadBenchmarkOptions = flags.quick
  ? {
      sessionLengths: [10, 200],
      eventsPerCell: 4_000,
      minSessions: 5,
      warmUp: { sessions: 5, events: 200 },
      redisEventsPerCell: 1_000,
      chatCalls: 1_000,
      chatWarmupCalls: 300,
      scale: { sessions: 300, events: 100 },
    }
  : {};
const progress = (what: string): void => {
  process.stderr.write(`… ${what}\n`);
};
const measured = await runOverheadBenchmark({
  ...quick,
  // Measured after everything else instead (see measureRedisScale).
  redisScale: false,
  ...(flags.redis ? {} : { redisUrl: false }),
  startRedis: flags.start,
  onProgress: progress,
});

progress('adversarial text: one long word of a repeating pattern in each place text is read');
const adversarial = await measureAdversarialText(flags.quick ? { chars: 16_384, repeats: 1 } : {});

progress('governor proxy: added latency per request and per streamed chunk');
const proxy = await measureProxyOverhead(flags.quick ? { requests: 200, warmUp: 50 } : {});

// Needs the Redis the overhead rows used: skipped with them.
const contention =
  'cells' in measured.redis
    ? await runContentionBenchmark(testRedisUrl(), {
        ...(flags.quick ? { repeats: 1, longSession: 1_000 } : {}),
        onProgress: progress,
      })
    : undefined;

let report = measured;
if ('cells' in measured.redis) {
  const scale = flags.quick ? { sessions: 300, events: 50 } : DEFAULT_REDIS_SCALE;
  report = { ...measured, redis: { ...measured.redis, scale: await measureRedisScale(testRedisUrl(), scale, progress) } };
}

const json = JSON.stringify(contention === undefined ? { ...report, adversarial, proxy } : { ...report, adversarial, proxy, contention }, null, 2);
if (flags.json && flags.jsonFile === undefined) {
  console.log(json);
} else {
  console.log(formatOverheadReport(report));
  console.log(`\n${formatAdversarialText(adversarial)}`);
  console.log(`\n${formatProxyOverhead(proxy)}`);
  if (contention !== undefined) console.log(formatContentionReport(contention));
  if (flags.jsonFile !== undefined) {
    fs.writeFileSync(flags.jsonFile, `${json}\n`);
    console.log(`\nJSON written to ${flags.jsonFile}`);
  }
}
