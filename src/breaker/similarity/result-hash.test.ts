import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeResult, resultHash } from './index.ts';
import { isRejectedRequest } from './result-hash.ts';

describe('result hashes', () => {
  test('timestamps, UUIDs, addresses, epoch times and durations are masked; whitespace is collapsed', () => {
    const result = 'Job 7 queued at 2024-05-20T10:00:00Z (took 12 ms)\n\tid 550E8400-E29B-41D4-A716-446655440000 at 0x7ffdeadbeef,  epoch 1700000000 ';
    assert.equal(normalizeResult(result), 'Job 7 queued at # (took #) id # at #, epoch #');
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
});

describe('isRejectedRequest', () => {
  test('reads errors that reject the request itself: a parameter missing, unknown or not allowed', () => {
    for (const text of [
      'ERROR:\nParameter `old_str` is required for command: str_replace.',
      'Error: missing required parameter "query"',
      'Unknown argument: --recursive',
      'Unexpected parameter `limit` for tool search',
      '1 validation error for SearchArgs\nquery\n  Field required',
    ]) {
      assert.equal(isRejectedRequest(text), true, text);
    }
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
