import { resultHash } from './src/breaker/similarity/result-hash.ts';
const big = ('2024-05-01T12:00:01Z INFO worker-3 processed item 1234 in 12 ms (status ok, queue depth 7)\n').repeat(45);
for (let k = 0; k < 20000; k++) resultHash(big + k);
const N = 50000; const t = process.hrtime.bigint();
for (let k = 0; k < N; k++) resultHash(big + (k % 10));
console.log((Number(process.hrtime.bigint() - t) / N / 1000).toFixed(2), 'µs');
