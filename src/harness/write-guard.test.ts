import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCommandWrites } from './write-guard.ts';

const options = { workingDirectory: '/srv/project', homeDirectory: '/srv/project/.governor-tmp' };
const allowed = (command: string) => checkCommandWrites(command, options).allowed;

describe('checkCommandWrites refuses visible writes outside the working directory', () => {
  for (const command of [
    'echo hi > /etc/motd',
    'echo hi >>../notes.txt',
    'ls 2>/tmp/err.log',
    'make &> /var/log/build.log',
    'echo x | tee -a out.txt /etc/hosts',
    'rm -rf /',
    'rm -rf ../sibling',
    'mv notes.txt ../elsewhere/',
    'cp -r src /opt/copy',
    'cp -t /opt a b',
    'touch ~/../../x',
    'mkdir -p /data/new',
    "sed -i 's/a/b/' /etc/hosts",
    "perl -pi -e 's/a/b/' ../file.txt",
    'dd if=/dev/zero of=/dev/sda bs=1M',
    'curl -o /usr/local/bin/tool https://example.test/tool',
    'git -C /other/repo commit -m x',
    'find /home -name "*.log" -delete',
    'cd ..',
    'cd / && ls',
    'cd sub && cd ../.. && touch x',
    'echo $(rm -rf /tmp/cache)',
    'echo `touch /root/x`',
    "bash -lc 'rm -rf /usr'",
    'sh -c "echo hi > /etc/x"',
    'eval rm /etc/passwd',
    'sudo -u root rm /etc/passwd',
    'FOO=1 env -i X=2 nohup rm /etc/passwd',
    'timeout 5 rm /etc/passwd',
    '(cd sub) ; rm ../x',
    'ln -s target /usr/bin/evil',
    'echo ok; chmod 777 /etc/shadow',
    'touch ~someone/x',
    'cat x > "/etc/$NAME"',
  ]) {
    test(command, () => {
      const check = checkCommandWrites(command, options);
      assert.equal(check.allowed, false);
      assert.match(check.allowed ? '' : check.reason, /outside the working directory|leave the working directory/);
    });
  }
});

describe('checkCommandWrites lets ordinary work through', () => {
  for (const command of [
    'ls -la /etc',
    'cat /etc/os-release > info.txt',
    'grep -r foo /usr/include | head',
    'echo hi > notes.txt 2>&1',
    'ls > /dev/null 2>&1',
    'cp /etc/hosts ./hosts.copy',
    'cd sub && touch ../x',
    'cd sub/deeper && rm ../y',
    'cd && touch x',
    'echo x > ~/cache.txt',
    'echo x > $HOME/a $TMPDIR/b',
    "sed -i '/^#/d' config.txt",
    "sed 's/a/b/' /etc/hosts",
    "python3 -c \"open('x','w')\"",
    'find . -name "*.tmp" -delete',
    'rm -rf "$BUILD_DIR"',
    'echo "a > /etc/b"',
    "cat <<'EOF' > script.sh\nrm -rf /etc\necho done > /etc/x\nEOF\nchmod +x script.sh",
    'test 3 -gt 2 && echo yes # > /etc/comment',
    'rsync -a src/ host:/backup/',
    'git -C sub status',
    'echo $((1 > 2))',
  ]) {
    test(command, () => assert.equal(allowed(command), true, JSON.stringify(checkCommandWrites(command, options))));
  }
});

test('extra writable roots are honoured', () => {
  const check = checkCommandWrites('echo x > /var/cache/app/x', { ...options, writableRoots: ['/var/cache/app'] });
  assert.equal(check.allowed, true);
});

test('the refusal names the offending path and the working directory', () => {
  const check = checkCommandWrites('rm /etc/passwd', options);
  assert.ok(!check.allowed);
  assert.match(check.reason, /\/etc\/passwd/);
  assert.match(check.reason, /\/srv\/project/);
});
