import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeResult, resultHash } from './index.ts';
import { isRejectedRequest, isTransientError, looksLikeError } from './result-hash.ts';

describe('result hashes', () => {
  // First in this file's process: the first long result is the one that makes the hashing's scratch space grow.
  test('results of every length hash, the first long one of a process included', () => {
    for (const length of [5_000, 20_000, 60_000, 300_000]) {
      const result = 'row ok\n'.repeat(length / 7);
      const hash = resultHash(result);
      assert.notEqual(resultHash(`${result}row failed\n`), hash, `${length} characters`);
      assert.equal(resultHash(result), hash, 'the same result hashes alike after a longer one');
    }
  });

  test('timestamps, UUIDs, addresses, epoch times and durations are masked; whitespace is collapsed', () => {
    const result = 'Job 7 queued at 2024-05-20T10:00:00Z (took 12 ms)\n\tid 550E8400-E29B-41D4-A716-446655440000 at 0x7ffdeadbeef,  epoch 1700000000 ';
    assert.equal(normalizeResult(result), 'Job 7 queued at # (took #) id # at #, epoch #');
  });

  test('any run of whitespace of any kind becomes one space, and a lone space stays', () => {
    // Every kind of whitespace the pattern must see alone and in runs, among characters that mask nothing.
    const alphabet = [' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u2028', '\u3000', '\ufeff', 'a', 'b', '.'];
    let seed = 7;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 16;
    };
    for (let i = 0; i < 5_000; i++) {
      let text = '';
      for (let length = next() % 24; length > 0; length--) text += alphabet[next() % alphabet.length];
      assert.equal(normalizeResult(text), text.replace(/\s+/g, ' ').trim(), JSON.stringify(text));
    }
  });

  test('results that differ only in volatile parts hash the same; other differences do not', () => {
    const poll = (at: string, ms: number, state: string) => `status: ${state}\nchecked ${at} in ${ms} ms`;
    assert.equal(resultHash(poll('2024-05-20 10:00:01', 12, 'queued')), resultHash(poll('2024-05-20 10:07:45', 480, 'queued')));
    assert.notEqual(resultHash(poll('2024-05-20 10:00:01', 12, 'queued')), resultHash(poll('2024-05-20 10:00:01', 12, 'running')));
    const pytest = (seconds: string) => `F..\n1 failed, 47 passed in ${seconds}s`;
    assert.equal(resultHash(pytest('5.97')), resultHash(pytest('4.84')));
    assert.notEqual(resultHash('1 failed, 47 passed in 5.97s'), resultHash('48 passed in 5.97s'));
    const rejected = (id: string) => `{"message":"Validation Failed","status":"422"}\nx-github-request-id: ${id}`;
    assert.equal(resultHash(rejected('B6F7:B0850:B30C2D8:52D8057:920B2E40')), resultHash(rejected('FC63:1C1F9:8C4CA2A:30F3207:E296CAC7')));
    assert.equal(resultHash('{"error":"not found","traceId":"4bf92f3577b34da6"}'), resultHash('{"error":"not found","traceId":"00f067aa0ba902b7"}'));
    assert.notEqual(resultHash('order W1234 not found'), resultHash('order W1235 not found'));
    // IPython numbers every cell it runs: a rerun fails with the same traceback under the next number.
    const traceback = (cell: number, line: number) =>
      `KeyError  Traceback (most recent call last)\nCell In[${cell}], line ${line}\n----> ${line} df['revenue'].sum()\nKeyError: 'revenue'`;
    assert.equal(resultHash(traceback(3, 3)), resultHash(traceback(4, 3)));
    assert.notEqual(resultHash(traceback(3, 3)), resultHash(traceback(3, 4)));
    assert.equal(normalizeResult('In [7]: x\nOut[7]: 1\n  File <ipython-input-7-9c2ab1f0d3e4>, line 1'), '# x # 1 File <#>, line 1');
    assert.equal(normalizeResult('In [7] the authors show'), 'In [7] the authors show', 'a citation is not a prompt');
    assert.equal(resultHash(null), 0);
    assert.equal(resultHash('  \n '), 0);
  });

  test('the same error carrying a fresh request or trace id each time hashes the same', () => {
    const same = (make: (id: string) => string, a: string, b: string) => assert.equal(resultHash(make(a)), resultHash(make(b)), make(a));
    // OpenAI: the id after "request ID" with no colon
    same(
      (id) =>
        `Error code: 500 - {'error': {'message': 'The server had an error while processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if the error persists. (Please include the request ID ${id} in your message.)', 'type': 'server_error'}}`,
      'req_5f4dcc3b5aa765d61d8327deb882cf99',
      'req_0b9e1d2c6a3f48e7b5c4d3a2f1e0d9c8',
    );
    // "Request ID" with a space, before a colon
    same((id) => `anthropic.InternalServerError: Internal server error (Request ID: ${id})`, 'req_011CUMx7Ab3dEf9GhJk2LmNp', 'req_011CUMy4Qr8sTu1VwXy6ZaBc');
    same((id) => `API Error: 529 Overloaded (Request ID: ${id})`, 'req_9d8c7b6a5f4e3d2c1b0a99887766554f', 'req_1a2b3c4d5e6f708192a3b4c5d6e7f809');
    // Stripe: "Request req_…:" and a bare req_ token
    same((id) => `StripeInvalidRequestError: Request ${id}: No such customer: 'cus_NffrFeUfNV2Hib'`, 'req_1A2b3C4d5E6f7G', 'req_Zy9Xw8Vu7Ts6Rq');
    // a hex id after "request id", after "trace", after "trace id"
    same((id) => `upstream error 502 from billing (request id ${id}); please retry`, '9f86d081884c7d65', '60303ae22b998861');
    same((id) => `query failed: permission denied for table orders, trace ${id}`, '4bf92f3577b34da6a3ce929d0e0e4736', '0af7651916cd43dd8448eb211c80319c');
    same((id) => `Error: index not found [trace id: ${id}]`, '4bf92f3577b34da6a3ce929d0e0e4736', '0af7651916cd43dd8448eb211c80319c');
    // AWS: "Request ID: …; S3 Extended Request ID: …"
    same(
      (id) =>
        `An error occurred (AccessDenied) when calling the GetObject operation: Access Denied (Service: Amazon S3; Status Code: 403; Request ID: ${id}; S3 Extended Request ID: ${id}Xq9=)`,
      '4442587FB7D0A2F9',
      'B7C1D6E0F2A39485',
    );
    // already masked before, still masked
    same((id) => `error=rate_limited request_id=${id}`, 'req_8f3a2b1c9d7e', 'req_1c2d3e4f5a6b');
    same((id) => `{"error":"conflict","id":"${id}"}`, '550e8400-e29b-41d4-a716-446655440000', '6fa459ea-ee8a-3ca4-894e-db77e160355e');
    // what the error is about still counts, and a short number or a word after "request id" is not an id
    assert.notEqual(
      resultHash("Request req_1A2b3C4d5E6f7G: No such customer: 'cus_NffrFeUfNV2Hib'"),
      resultHash("Request req_1A2b3C4d5E6f7G: No such customer: 'cus_PqrsTuvWxyZ012'"),
    );
    assert.notEqual(resultHash('pull request ID 1234 not found'), resultHash('pull request ID 1235 not found'));
    assert.equal(normalizeResult('Error: request id is missing; trace follows'), 'Error: request id is missing; trace follows');
    assert.equal(normalizeResult('if req_processing_time > req_timeout:'), 'if req_processing_time > req_timeout:');
  });

  test("a generated hex id under a label of its own, as Codex's exec_command output header gives one per run, is masked; a number is not", () => {
    const codex = (id: string, output: string) =>
      `Chunk ID: ${id}\nWall time: 0.0915 seconds\nProcess exited with code 0\nOriginal token count: 2\nOutput:\n${output}\n`;
    assert.equal(resultHash(codex('c0eadb', 'hello')), resultHash(codex('dbf2c3', 'hello')));
    assert.notEqual(resultHash(codex('c0eadb', 'hello')), resultHash(codex('dbf2c3', 'goodbye')));
    assert.equal(resultHash('Job ID: 3fa9b1e2 queued'), resultHash('Job ID: 77c0d4a9 queued'));
    // An id of digits only (an order, a customer) names what the result is about.
    assert.notEqual(resultHash('Order ID: 104233 shipped'), resultHash('Order ID: 104234 shipped'));
    // Not a label and its value: a word that is all hex letters, lower-case labels.
    assert.equal(normalizeResult('Build ID: deadbeef'), 'Build ID: deadbeef');
    assert.equal(normalizeResult('chunk id: c0eadb'), 'chunk id: c0eadb');
    // A labelled UUID is an id as a whole: not its first part alone, which would leave the rest to differ.
    const denied = (id: string) => `Error: permission denied. Request ID: ${id}`;
    assert.equal(resultHash(denied('1b2c3d4e-4d5e-4f90-8a1b-a1b2c3d4e5f1')), resultHash(denied('9f8e7d6c-1a2b-4c3d-9e8f-0a1b2c3d4e5f')));
    assert.equal(resultHash('Trace ID: 1b2c3d4e-4d5e-4f90-8a1b-a1b2c3d4e5f1 failed'), resultHash('Trace ID: 0a0b0c0d-4d5e-4f90-8a1b-a1b2c3d4e5f1 failed'));
  });

  test('a job polled for progress hashes differently at every step', () => {
    const distinct = (results: string[]) => assert.equal(new Set(results.map(resultHash)).size, results.length, results.join(' | '));
    // byte counts and other large counters that happen to look like epoch seconds
    distinct([1715470336, 1820327936, 1925185536].map((n) => `{"job_id":"copy-7","state":"running","bytes_copied":${n},"total_bytes":4294967296}`));
    distinct([1715470336, 1820327936, 1925185536].map((n) => `copied ${n} of 4294967296 bytes`));
    distinct(['1917064388', '1968236763', '1656367028'].map((id) => `{"name": "Tablet", "item_id": "${id}", "price": 131.75}`));
    // seconds of media or of a job done, as a position rather than a timing
    distinct([30, 60, 90].map((n) => `encoding: ${n} seconds of 600 seconds done`));
    distinct([30, 60, 90].map((n) => `transcribed ${n}s / 600s`));
    distinct([30000, 60000, 90000].map((n) => `playback position ${n} ms of 600000 ms`));
    distinct([5, 35, 70].map((n) => `export exp_a1: ${n}% done, ETA in 4 min`));
    // the same polls, where only the time of the poll or a timing changes, are the same
    const poll = (at: number, took: string) => `{"job_id":"copy-7","bytes_copied":1715470336,"updated_at":${at},"ts":${at}123} (took ${took})`;
    assert.equal(resultHash(poll(1715470336, '3 seconds')), resultHash(poll(1715470399, '12 seconds')));
    assert.equal(resultHash('epoch 1700000000 heartbeat'), resultHash('epoch 1700000060 heartbeat'));
    assert.equal(resultHash('2024-05-12 10:31:07 DEBUG 1715510000.123456 poll'), resultHash('2024-05-12 10:31:07 DEBUG 1715510060.654321 poll'));
  });

  test('timings are masked where they read as timings: a unit below a second, a fraction, or a timing word', () => {
    assert.equal(
      normalizeResult(
        'Tests: 1 failed, 40 passed, 41 total\nTime: 5.069 s\nadded 412 packages in 14s\ndone, took 3 seconds; elapsed: 12 s; retry after 30s; 0.0056 sec; (11 tests) 28ms',
      ),
      'Tests: 1 failed, 40 passed, 41 total Time: # added 412 packages in # done, took #; elapsed: #; retry after #; #; (11 tests) #',
    );
    assert.equal(
      normalizeResult('sleeping 30 seconds; clients disconnect for up to 60 seconds'),
      'sleeping 30 seconds; clients disconnect for up to 60 seconds',
    );
  });
});

describe('result hashes: values a rerun changes, and long results', () => {
  test('the same failure rerun is the same result, whatever the run named anew', () => {
    const same = (make: (v: string) => string, a: string, b: string) => assert.equal(resultHash(make(a)), resultHash(make(b)), make(a));
    same((t) => `FAILED tests/test_io.py::test_save - FileNotFoundError: /tmp/${t}/out.txt`, 'tmpk3j_x9a2', 'tmp8f_2qz0c');
    same((n) => `E   AssertionError in /tmp/pytest-of-root/pytest-${n}/test_save0/out.txt`, '17', '18');
    same((pid) => `INFO: Started server process [${pid}]\nERROR: [Errno 98] address already in use`, '48213', '48377');
    same((pid) => `worker pid=${pid} exited with code 1`, '48213', '48377');
    same((port) => `test server on http://127.0.0.1:${port}/ refused the upload: 413`, '43211', '38805');
    same((t) => `FAIL\nreal\t${t}\nuser\t0m0.100s`, '0m0.412s', '0m0.398s');
    same((t) => `build failed after ${t}`, '0:00:03.21', '0:00:04.02');
    same((id) => `container ${id} exited with code 137`, '3f2a9c1e7b10', '9b0c44d2e1aa');
    same((id) => `job_id=${id} failed: quota exceeded`, '5f2b9c1e7a10d3e4', '0c44d2e1aa9b7f21');
    // Ids that open with a letter or a digit, after the word with an id suffix, and the whole id only.
    assert.equal(normalizeResult('Session-ID: a1b2c3d4e5f6 worker #0123456789abcdef0123456789abcdef'), 'Session-ID: # worker ##');
    assert.equal(
      normalizeResult('run 111111111111 run aaaaaaaaaaaa pod abcdef123456789abcdef123456789abc'),
      'run 111111111111 run aaaaaaaaaaaa pod abcdef123456789abcdef123456789abc',
    );
    // What a result is about still counts: a job's position, a fixed port, a content digest, a count.
    assert.notEqual(resultHash('process 3 of 10 done'), resultHash('process 4 of 10 done'));
    assert.notEqual(resultHash('encoded 0:01:30 of 1:30:00'), resultHash('encoded 0:02:30 of 1:30:00'));
    assert.notEqual(resultHash('refused: localhost:8080'), resultHash('refused: localhost:8081'));
    assert.notEqual(resultHash('HEAD is 9fceb02d0ae598e95dc970b74767f19372d61af8'), resultHash('HEAD is 1a410efbd13591db07496601ebc7a059dd55cfe9'));
    // A digest cut short is still content: another screen, another file.
    assert.notEqual(resultHash('screenshot 5d41402abc4b2a76b9719d91 (4012 characters)'), resultHash('screenshot 7d793037a0760186574b0282 (4012 characters)'));
    assert.notEqual(resultHash('sha256 e3b0c44298fc1c149afbf4c8 src/a.py'), resultHash('sha256 9f86d081884c7d659a2feaa0 src/a.py'));
    assert.equal(normalizeResult('tmp_directory and /tmp/tmpfilename.txt'), 'tmp_directory and /tmp/tmpfilename.txt');
  });

  test('a long result is news when it changes anywhere, not only at its ends', () => {
    const status = (progress: number) => JSON.stringify({ job: 'J-7', head: 'x'.repeat(9000), progress, tail: 'y'.repeat(3000) });
    assert.notEqual(resultHash(status(37)), resultHash(status(52)));
    assert.equal(resultHash(status(37)), resultHash(status(37)));
    // Beyond 256 KB it reads windows spread over the whole: a change in the middle of a 1 MB log counts too.
    const log = (state: string) => `${'line of build output\n'.repeat(25_000)}step 12: ${state}\n${'line of build output\n'.repeat(25_000)}`;
    assert.ok(log('running').length > 262_144);
    assert.equal(resultHash(log('running')), resultHash(log('running')));
  });
});

describe('isTransientError', () => {
  test('an outage reads as one at the start or the end of the error', () => {
    const traceback = `Traceback (most recent call last):\n${'  File "client.py", line 10, in call\n'.repeat(20)}requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: http://billing`;
    for (const text of [
      'Error: 503 Service Unavailable',
      traceback,
      'HTTP 429 Too Many Requests',
      'upstream status=502',
      'gateway (504)',
      'Tool "fetch" timed out after 50 ms and was cancelled.',
    ]) {
      assert.equal(isTransientError(text), true, text);
    }
  });

  test('a number that is no status code, and a rejection, are not an outage', () => {
    for (const text of [
      'Error: user not found (lookup took 502 ms)',
      'SyntaxError at line 503',
      'Error: 5000 items exceeded',
      'order #503 rejected',
      'connect to port 502 refused',
      'Error: user not found',
    ]) {
      assert.equal(isTransientError(text), false, text);
    }
  });
});

describe('isRejectedRequest', () => {
  test('reads errors that reject the request itself: a parameter missing, unknown or not allowed', () => {
    for (const text of [
      'ERROR:\nParameter `old_str` is required for command: str_replace.',
      'Error: missing required parameter "query"',
      'Unknown argument: --recursive',
      'Unexpected parameter `limit` for tool search',
      '1 validation error for SearchArgs\nquery\n  Field required',
      // The same framed by an agent framework: a label, a header line.
      'Observation: ERROR:\nParameter `old_str` is required for command: str_replace.',
      '[str_replace_editor output]\nERROR:\nParameter `old_str` is required for command: str_replace.',
    ]) {
      assert.equal(isRejectedRequest(text), true, text);
    }
    assert.equal(looksLikeError('Observation: Traceback (most recent call last):\n  File "t.py"'), true);
    assert.equal(looksLikeError('Observation: the tests pass'), false);
  });

  test('errors about the world or about the code being run are not', () => {
    for (const text of [
      'ERROR:\nInvalid `path` parameter: /workspace/reproduce.py. File already exists at: /workspace/reproduce.py.',
      'ERROR:\nNo replacement was performed, old_str `x = 1` did not appear verbatim in /repo/a.py.',
      'Traceback (most recent call last):\n  File "t.py", line 3\nTypeError: f() missing 1 required positional argument: \'a\'',
      'FAILED tests/test_cli.py::test_option_required - AssertionError',
      'Error: payment amount does not add up',
    ]) {
      assert.equal(isRejectedRequest(text), false, text);
    }
  });
});
