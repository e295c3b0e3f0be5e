import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { OptionsFileError, readOptionsFile } from './read-options-file.ts';

test('readOptionsFile reads a JSON object, with or without a byte-order mark, and names the file in every refusal', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'governor-options-'));
  try {
    const write = async (name: string, text: string): Promise<string> => {
      await fs.writeFile(path.join(dir, name), text);
      return path.join(dir, name);
    };
    assert.deepEqual(await readOptionsFile(await write('plain.json', '{"cooldownMs": 5}'), 'plain.json'), { cooldownMs: 5 });
    assert.deepEqual(await readOptionsFile(await write('bom.json', '\uFEFF{"cooldownMs": 5}'), 'bom.json'), { cooldownMs: 5 });
    for (const [name, text, problem] of [
      ['list.json', '[1]', /--config list\.json must contain a JSON object of breaker options/],
      ['cut.json', '{"a":', /--config cut\.json is not valid JSON/],
      // Only a leading mark is skipped: one inside the text is still not JSON.
      ['late.json', ' \uFEFF{}', /--config late\.json is not valid JSON/],
    ] as const) {
      await assert.rejects(
        readOptionsFile(await write(name, text), name),
        (error: unknown) => error instanceof OptionsFileError && problem.test(error.message),
      );
    }
    await assert.rejects(readOptionsFile(path.join(dir, 'none.json'), 'none.json'), /cannot read --config none\.json: no such file/);
    await assert.rejects(readOptionsFile(dir, 'dir'), /cannot read --config dir: is a directory/);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
