/** The bundled task of the main job: a one-line bug and a check that shows it. */
export const DEMO_TASK = 'The check in this directory fails. Make `node check.mjs` pass by fixing slugify.mjs (do not change check.mjs), then call submit.';

/** Files written into a fresh working directory for every run. */
export const DEMO_FILES: Readonly<Record<string, string>> = {
  'slugify.mjs': `// Turns a title into a URL slug.
export function slugify(title) {
  return title.toLowerCase().replace(' ', '-');
}
`,
  'check.mjs': `import assert from 'node:assert/strict';
import { slugify } from './slugify.mjs';

assert.equal(slugify('Hello Big World'), 'hello-big-world');
assert.equal(slugify('  Trim me  '), 'trim-me');
console.log('all checks passed');
`,
};

/** The fix the scripted stand-in applies once it stops looping. */
export const DEMO_FIX = `cat > slugify.mjs <<'EOF'
// Turns a title into a URL slug.
export function slugify(title) {
  return title.trim().toLowerCase().split(/\\s+/).join('-');
}
EOF`;
