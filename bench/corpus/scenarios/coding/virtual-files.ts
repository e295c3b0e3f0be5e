import { Rng } from '../../prng.ts';
import type { Issue, Repo, RepoFile } from './repos.ts';

/**
 * Deterministic source text for the fictional repositories: the same file
 * always reads the same (so a re-read in a loop returns identical content),
 * and an issue's buggy line sits inside its symbol where grep and the line
 * numbers of an edit find it.
 */

const PARAMS: Record<Repo['language'], readonly string[]> = {
  python: ['amount', 'payload', 'row', 'value', 'event', 'cart', 'request', 'currency', 'batch'],
  typescript: ['entry', 'input', 'options', 'value', 'range', 'seconds', 'req', 'account'],
  go: ['path', 'req', 'key', 'value', 'now', 'h', 'w'],
  rust: ['key', 'value', 'record', 'path', 'now', 'buf'],
};

const HELPERS = [
  'coerce',
  'normalise',
  'validate',
  'lookup',
  'resolve',
  'emit',
  'encode',
  'decode',
  'merge',
  'split',
  'flush',
  'retry',
  'render',
  'collect',
  'index',
  'prune',
  'clamp',
  'audit',
];

const NOUNS = ['amount', 'entry', 'record', 'config', 'header', 'batch', 'state', 'limit', 'event', 'item', 'window', 'token'];

function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function isType(symbol: string): boolean {
  return /^[A-Z][a-z]/.test(symbol);
}

function isConstant(symbol: string): boolean {
  return /^[A-Z][A-Z0-9_]+$/.test(symbol);
}

function isTestFile(path: string): boolean {
  return /(^|\/)tests?\/|_test\.go$|\.test\.tsx?$|(^|\/)test_/.test(path);
}

function header(repo: Repo, file: RepoFile, rng: Rng): string[] {
  switch (repo.language) {
    case 'python':
      return [
        `"""${file.path.split('/').pop()?.replace('.py', '').replace(/_/g, ' ')} — part of ${repo.name.split('/')[1]}."""`,
        'from __future__ import annotations',
        '',
        'import logging',
        ...rng
          .sample(
            [
              'import hashlib',
              'import hmac',
              'import json',
              'from dataclasses import dataclass, field',
              'from datetime import datetime, timezone',
              'from decimal import Decimal, ROUND_HALF_UP',
              'from typing import Any, Iterable',
            ],
            4,
          )
          .sort(),
        '',
        'logger = logging.getLogger(__name__)',
        '',
      ];
    case 'typescript':
      return [
        ...rng
          .sample(
            [
              "import { z } from 'zod';",
              "import type { Entry } from '../ledger/entries';",
              "import { HttpError } from '../api/errors';",
              "import { useEffect, useMemo, useState } from 'react';",
              "import { roundTo } from '../currency/round';",
            ],
            2,
          )
          .sort(),
        '',
      ];
    case 'go': {
      const pkg = file.path.includes('/') ? (file.path.split('/')[0] as string) : (repo.name.split('/')[1]?.replace('-', '') ?? 'main');
      return [
        `package ${pkg}`,
        '',
        'import (',
        ...rng.sample(['\t"errors"', '\t"fmt"', '\t"net/http"', '\t"strings"', '\t"sync"', '\t"time"'], 4).sort(),
        ')',
        '',
      ];
    }
    case 'rust':
      return [
        ...rng
          .sample(
            [
              'use std::collections::HashMap;',
              'use std::fs::File;',
              'use std::io::{self, BufRead, BufReader, Write};',
              'use std::time::{Duration, SystemTime};',
              'use crate::{Error, Result};',
            ],
            3,
          )
          .sort(),
        '',
      ];
  }
}

function pythonFunction(name: string, rng: Rng, bad: string | undefined, isTest: boolean): string[] {
  const a = rng.pick(PARAMS.python);
  if (isTest) {
    const subject = rng.pick(NOUNS);
    return [
      `def ${name}(${rng.chance(0.5) ? 'client, ' : ''}${rng.chance(0.5) ? 'settings' : 'db'}):`,
      `    ${subject} = make_${subject}(${rng.pick(['"USD"', '"JPY"', 'Decimal("12.50")', '3', 'quantity=2'])})`,
      `    result = ${rng.pick(HELPERS)}_${subject}(${subject})`,
      `    assert result is not None`,
      `    assert result.${rng.pick(['status', 'amount', 'total', 'count'])} == ${rng.pick(['"ok"', 'Decimal("12.50")', '2', '1500'])}`,
      '',
      '',
    ];
  }
  const lines = [
    `def ${name}(${a}${rng.chance(0.5) ? ', *, strict: bool = False' : ''}):`,
    `    """${rng.pick(['Return', 'Compute', 'Validate', 'Normalise', 'Resolve'])} the ${rng.pick(NOUNS)} for ${a}."""`,
  ];
  const groups: string[][] = [
    [`    if ${a} is None:`, `        raise ValueError("${a} is required")`],
    [`    logger.debug("${name}: %r", ${a})`],
    ['    result = []', `    for item in ${a}:`, '        if not item:', '            continue', '        result.append(item)'],
    [
      '    try:',
      `        value = Decimal(str(${a}))`,
      '    except (ArithmeticError, ValueError) as exc:',
      `        raise ValueError(f"invalid ${a}: {${a}!r}") from exc`,
    ],
    [`    key = str(${a}).strip().lower()`, '    if key in _CACHE:', '        return _CACHE[key]'],
  ];
  for (const g of rng.sample(groups, rng.int(2, 4))) lines.push(...g);
  if (bad !== undefined) lines.push(bad);
  if (bad === undefined || !bad.trim().startsWith('return')) lines.push(`    return ${rng.pick(['result', 'value', a, 'key'])}`);
  lines.push('', '');
  return lines;
}

function pythonType(name: string, rng: Rng, constant: boolean): string[] {
  if (constant) {
    return [`${name} = {`, '    "USD": 2,', '    "EUR": 2,', '    "GBP": 2,', '    "JPY": 0,', '    "KRW": 0,', '    "BHD": 3,', '}', '', ''];
  }
  const fields = rng.sample(
    [
      'id: str',
      'amount: Decimal',
      'currency: str = "USD"',
      'status: str = "pending"',
      'created_at: datetime | None = None',
      'metadata: dict[str, Any] = field(default_factory=dict)',
      'quantity: int = 1',
      'percent: Decimal = Decimal("0")',
    ],
    rng.int(3, 6),
  );
  return ['@dataclass', `class ${name}:`, `    """${name} as stored in the database."""`, '', ...fields.map((f) => `    ${f}`), '', ''];
}

function tsFunction(name: string, rng: Rng, bad: string | undefined, isTest: boolean): string[] {
  const a = rng.pick(PARAMS.typescript);
  if (isTest) {
    return [
      `  it('${name}', () => {`,
      `    const ${a} = make${rng.pick(['Entry', 'Range', 'Input'])}(${rng.pick(['-5.005', "'2024-05-01'", '60', '{ amount: 10 }'])});`,
      `    expect(${rng.pick(['computeBalance', 'formatDuration', 'clampRange', 'validateEntry'])}(${a})).${rng.pick(['toBe(-10)', "toBe('1m')", 'toEqual(expected)', 'toThrow()'])};`,
      '  });',
      '',
    ];
  }
  const lines = [
    `export function ${camel(name)}(${a}: ${rng.pick(['number', 'string', 'Entry', 'Options'])}): ${rng.pick(['number', 'string', 'boolean', 'Balance'])} {`,
  ];
  const groups: string[][] = [
    [`  if (${a} === undefined) {`, `    throw new Error('${a} is required');`, '  }'],
    [`  const scaled = Number(${a}) * 100;`],
    [`  for (const item of items) {`, '    if (!item) continue;', '    total += item.amount;', '  }'],
    [`  const key = String(${a}).trim();`],
    [`  if (Number.isNaN(Number(${a}))) return NaN;`],
  ];
  for (const g of rng.sample(groups, rng.int(2, 3))) lines.push(...g);
  if (bad !== undefined) lines.push(bad);
  if (bad === undefined || !bad.trim().startsWith('return')) lines.push(`  return ${rng.pick(['total', 'key', 'scaled', a])} as never;`);
  lines.push('}', '');
  return lines;
}

function tsType(name: string, rng: Rng): string[] {
  const fields = rng.sample(
    ['id: string;', 'amount: number;', 'currency: string;', 'date: string;', 'account: string;', 'start: Date;', 'end: Date;', 'label?: string;'],
    rng.int(3, 5),
  );
  return [`export interface ${name} {`, ...fields.map((f) => `  ${f}`), '}', ''];
}

function goFunction(name: string, rng: Rng, bad: string | undefined, isTest: boolean): string[] {
  const a = rng.pick(PARAMS.go);
  if (isTest) {
    return [
      `func ${name}(t *testing.T) {`,
      '\tr := NewRouter()',
      `\tr.Handle("GET", "/${rng.pick(['users', 'items', 'health'])}/", okHandler)`,
      '\trec := httptest.NewRecorder()',
      '\tr.ServeHTTP(rec, httptest.NewRequest("GET", "/users/", nil))',
      '\tif rec.Code != http.StatusOK {',
      '\t\tt.Fatalf("got status %d, want 200", rec.Code)',
      '\t}',
      '}',
      '',
    ];
  }
  const receiver = rng.chance(0.6) ? `(${rng.pick(['r *Router', 'b *TokenBucket', 'h Header', 's *RedisStore'])}) ` : '';
  const fname = /^[a-z]/.test(name) ? name : name;
  const lines = [`func ${receiver}${fname}(${a} string) (string, error) {`];
  const groups: string[][] = [
    [`\tif ${a} == "" {`, `\t\treturn "", errors.New("${a} is required")`, '\t}'],
    ['\tr.mu.RLock()', '\tdefer r.mu.RUnlock()'],
    [`\tfor _, part := range strings.Split(${a}, "/") {`, '\t\tif part == "" {', '\t\t\tcontinue', '\t\t}', '\t\tparts = append(parts, part)', '\t}'],
    [`\tkey := strings.ToLower(strings.TrimSpace(${a}))`],
  ];
  for (const g of rng.sample(groups, rng.int(2, 3))) lines.push(...g);
  if (bad !== undefined) lines.push(bad);
  lines.push(`\treturn ${a}, nil`, '}', '');
  return lines;
}

function goType(name: string, rng: Rng): string[] {
  const fields = rng.sample(
    ['mu     sync.RWMutex', 'routes map[string]http.Handler', 'last   time.Time', 'tokens float64', 'rate   float64', 'burst  int', 'client *redis.Client'],
    rng.int(2, 4),
  );
  return [`// ${name} is safe for concurrent use.`, `type ${name} struct {`, ...fields.map((f) => `\t${f}`), '}', ''];
}

function rustFunction(name: string, rng: Rng, bad: string | undefined, isTest: boolean): string[] {
  const a = rng.pick(PARAMS.rust);
  if (isTest) {
    return [
      '#[test]',
      `fn ${name}() {`,
      '    let dir = tempfile::tempdir().unwrap();',
      '    let mut store = Store::open(dir.path()).unwrap();',
      `    store.put("${rng.pick(['a', 'k1', 'session'])}", b"v").unwrap();`,
      `    assert_eq!(store.len(), ${rng.int(1, 3)});`,
      '}',
      '',
    ];
  }
  const lines = [`pub fn ${name}(&mut self, ${a}: &str) -> Result<Option<Record>> {`];
  const groups: string[][] = [
    [`    if ${a}.is_empty() {`, '        return Err(Error::InvalidKey);', '    }'],
    ['    let mut line = String::new();', '    let n = self.reader.read_line(&mut line)?;'],
    ['    for entry in self.index.values() {', '        if entry.expired(now) {', '            continue;', '        }', '        live += 1;', '    }'],
    [`    let key = ${a}.trim().to_owned();`],
  ];
  for (const g of rng.sample(groups, rng.int(2, 3))) lines.push(...g);
  if (bad !== undefined) lines.push(bad);
  lines.push('    Ok(None)', '}', '');
  return lines;
}

function rustType(name: string, rng: Rng): string[] {
  const fields = rng.sample(
    ['path: PathBuf,', 'index: HashMap<String, Entry>,', 'reader: BufReader<File>,', 'created: u64,', 'ttl: u64,', 'writer: File,'],
    rng.int(2, 4),
  );
  return ['#[derive(Debug)]', `pub struct ${name} {`, ...fields.map((f) => `    ${f}`), '}', ''];
}

function symbolBlock(repo: Repo, name: string, rng: Rng, bad: string | undefined, test: boolean): string[] {
  switch (repo.language) {
    case 'python':
      return isConstant(name) || (isType(name) && !test) ? pythonType(name, rng, isConstant(name)) : pythonFunction(name, rng, bad, test);
    case 'typescript':
      return isType(name) && !test ? tsType(name, rng) : tsFunction(name, rng, bad, test);
    case 'go':
      return isType(name) && !name.startsWith('Test') && !name.startsWith('New') ? goType(name, rng) : goFunction(name, rng, bad, test);
    case 'rust':
      return isType(name) && !test ? rustType(name, rng) : rustFunction(name, rng, bad, test);
  }
}

const cache = new Map<string, readonly string[]>();

/** The lines of `path` in `repo` (without line numbers). */
export function fileLines(repo: Repo, path: string): readonly string[] {
  const key = `${repo.name}:${path}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const rng = new Rng(key);
  const file = repo.files.find((f) => f.path === path) ?? { path, symbols: [], lines: rng.int(70, 320) };
  const test = isTestFile(path);
  const bugs = new Map<string, Issue>(repo.issues.filter((i) => i.file === path).map((i) => [i.symbol, i]));
  const lines = [...header(repo, file, rng)];
  const tsTest = test && repo.language === 'typescript';
  if (tsTest)
    lines.push(
      `describe('${path
        .split('/')
        .pop()
        ?.replace(/\.test\.tsx?$/, '')}', () => {`,
    );
  for (const symbol of file.symbols) lines.push(...symbolBlock(repo, symbol, rng, bugs.get(symbol)?.badLine, test));
  // Pad with private helpers up to the nominal length, so chunked reads have chunks.
  let n = 0;
  while (lines.length < file.lines - 2) {
    const name = `${repo.language === 'python' || repo.language === 'rust' ? '_' : ''}${rng.pick(HELPERS)}_${rng.pick(NOUNS)}_${++n}`;
    lines.push(...symbolBlock(repo, repo.language === 'typescript' ? camel(name.replace(/^_/, '')) : name, rng, undefined, test && n % 3 === 0));
  }
  if (tsTest) lines.push('});');
  cache.set(key, lines);
  return lines;
}

export interface GrepHit {
  readonly path: string;
  readonly line: number;
  readonly text: string;
}

/** Every line in the repository containing `term`, file by file. */
export function grepRepo(repo: Repo, term: string, under = ''): GrepHit[] {
  const hits: GrepHit[] = [];
  for (const file of repo.files) {
    if (!file.path.startsWith(under)) continue;
    fileLines(repo, file.path).forEach((text, i) => {
      if (text.includes(term)) hits.push({ path: file.path, line: i + 1, text });
    });
  }
  return hits;
}
