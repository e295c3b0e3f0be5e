import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_READ_ONLY_TOOLS } from '../breaker-options.ts';
import { toolVerbMatcher, WRITING_VERBS } from './tool-verbs.ts';

describe('toolVerbMatcher', () => {
  const readOnly = toolVerbMatcher(DEFAULT_READ_ONLY_TOOLS);

  test("a tool's own name after a namespace counts, as MCP clients and other hosts prefix it", () => {
    for (const name of [
      'get_order',
      'getOrder',
      'mcp__airline__get_order',
      'mcp__airline__calculate',
      'airline.get_order',
      'github/search_issues',
      'fs:read_file',
    ]) {
      assert.equal(readOnly(name), true, name);
    }
    for (const name of ['book_reservation', 'mcp__airline__book_reservation', 'airline.cancel_order', 'getaway', 'mcp__get__book']) {
      assert.equal(readOnly(name), false, name);
    }
  });

  test('globs match the whole name', () => {
    const custom = toolVerbMatcher(['mcp__github__*', 'audit_*']);
    assert.equal(custom('mcp__github__create_issue'), true);
    assert.equal(custom('audit_log'), true);
    assert.equal(custom('mcp__gitlab__create_issue'), false);
  });
});

describe('WRITING_VERBS', () => {
  const writes = toolVerbMatcher(WRITING_VERBS);

  test('names that write, also after a namespace; not a calculator, a shell or an editor that also views', () => {
    for (const name of [
      'write_file',
      'writeFile',
      'mcp__filesystem__write_file',
      'edit_file',
      'update_record',
      'apply_patch',
      'github.create_issue',
      'delete_branch',
    ]) {
      assert.equal(writes(name), true, name);
    }
    for (const name of ['add', 'add_numbers', 'run_command', 'execute_bash', 'str_replace_editor', 'read_file', 'settings', 'web_search']) {
      assert.equal(writes(name), false, name);
    }
  });
});
