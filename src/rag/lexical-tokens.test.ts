import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lexicalTokens } from './lexical-tokens.ts';

test('Latin words are lower-cased and split at punctuation and spaces', () => {
  assert.deepEqual(lexicalTokens('Hello, World! read_file("a.txt")'), ['hello', 'world', 'read', 'file', 'a', 'txt']);
});

test('Japanese and Chinese runs become character bigrams; Latin runs inside stay words', () => {
  assert.deepEqual(lexicalTokens('GPT-4で東京の天気'), ['gpt', '4', 'で東', '東京', '京の', 'の天', '天気']);
  assert.deepEqual(lexicalTokens('北京'), ['北京']);
  assert.deepEqual(lexicalTokens('猫'), ['猫'], 'a single character stands alone');
});

test('Katakana keeps its prolonged sound mark; full-width forms are normalised', () => {
  assert.deepEqual(lexicalTokens('データベース'), ['デー', 'ータ', 'タベ', 'ベー', 'ース']);
  assert.deepEqual(lexicalTokens('ＡＢＣ１２３'), ['abc123']);
});

test('scripts that write vowels as marks keep whole words', () => {
  assert.deepEqual(lexicalTokens('हिन्दी भाषा'), ['हिन्दी', 'भाषा']);
  assert.deepEqual(lexicalTokens('Привет, мир'), ['привет', 'мир']);
  assert.deepEqual(lexicalTokens('مرحبا بالعالم'), ['مرحبا', 'بالعالم']);
});

test('Korean becomes character pairs, so a word matches with its particles attached', () => {
  assert.deepEqual(lexicalTokens('한국어를'), ['한국', '국어', '어를']);
});

test('text without letters or digits has no tokens', () => {
  assert.deepEqual(lexicalTokens(''), []);
  assert.deepEqual(lexicalTokens('?!… —'), []);
});
