/**
 * Common secret formats as they turn up in logs, tool output and
 * errors: `text` contains `secret`, which must not survive redaction.
 * The values are made up for tests.
 */
export const SECRET_FORMATS: ReadonlyArray<{ readonly name: string; readonly text: string; readonly secret: string }> = [
  {
    name: 'aws_secret_access_key assignment',
    text: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE',
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE',
  },
  { name: 'Redis URL with an empty user', text: 'connect to redis://:Rd1sPassw0rd@cache:6379/0 now', secret: 'Rd1sPassw0rd' },
  { name: 'URL password containing @', text: 'DATABASE_URL=postgres://app:p4ss@w0rdX@db.internal:5432/app', secret: 'p4ss@w0rdX' },
  { name: 'URL password containing /', text: 'mysql://root:sl4sh/in/Pw@db:3306/shop failed', secret: 'sl4sh/in/Pw' },
  { name: 'Stripe live key', text: 'stripe key sk_live_4eC39HqLyjWDarjtT1zdp7dcQ2', secret: 'sk_live_4eC39HqLyjWDarjtT1zdp7dcQ2' },
  { name: 'Hugging Face token', text: 'HUGGINGFACE=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh', secret: 'hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh' },
  { name: 'npm token', text: '//registry/:_authToken=npm_Ab3dEf6hIj9lMn0pQr3tUv6xYz9AbC2eFg5h', secret: 'npm_Ab3dEf6hIj9lMn0pQr3tUv6xYz9AbC2eFg5h' },
  {
    name: 'Azure AccountKey',
    text: 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eA==;EndpointSuffix=core.windows.net',
    secret: 'Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eA',
  },
  { name: 'JSON "token" field', text: '{"user":"ann","token":"tok_9f8e7d6c5b4a3210ZZ"}', secret: 'tok_9f8e7d6c5b4a3210ZZ' },
  { name: 'OpenAI project key', text: 'OPENAI_API_KEY=sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c', secret: 'sk-proj-Xq9vT3bLbkFJ2mN8pQ4rS6tU1wY7zA0c' },
  {
    name: 'Anthropic key in prose',
    text: 'the key sk-ant-api03-Qw3rTy8uIo9pAs2dFg5hJk7lZx1cVb4nM6 was rejected',
    secret: 'sk-ant-api03-Qw3rTy8uIo9pAs2dFg5hJk7lZx1cVb4nM6',
  },
  {
    name: 'GitHub token',
    text: 'git clone https://ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ@github.com/o/r',
    secret: 'ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ',
  },
  { name: 'GitLab token', text: 'PRIVATE-TOKEN: glpat-Zx8Cv7Bn6Mq5Wr4Et3Yu', secret: 'glpat-Zx8Cv7Bn6Mq5Wr4Et3Yu' },
  { name: 'AWS access key id', text: 'AccessKeyId: AKIAIOSFODNN7EXAMPLE', secret: 'AKIAIOSFODNN7EXAMPLE' },
  {
    name: 'Slack bot token',
    text: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
    secret: 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
  },
  {
    name: 'JWT',
    text: 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    secret: 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  },
  {
    name: 'private key block',
    text: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA\n-----END OPENSSH PRIVATE KEY-----',
    secret: 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAA',
  },
  { name: 'Authorization: Bearer', text: 'Authorization: Bearer 9f86d081884c7d659a2feaa0c55ad015', secret: '9f86d081884c7d659a2feaa0c55ad015' },
  { name: 'env dump with short passwords', text: 'DB_PASS=hunter2\nSMTP_PASS=mailme\nDB_PWD=Pwd4Db\nAPP_JWT=s1gn3d.t0k3n.v4lu3', secret: 'hunter2' },
  { name: 'connection string Password=', text: 'Server=tcp:db,1433;User Id=sa;Password=Str0ng;Pass!;Encrypt=true', secret: 'Str0ng' },
  { name: 'password in JSON text inside JSON', text: '{"output":"config: {\\"password\\": \\"Hunt3r-JsonPw\\"}"}', secret: 'Hunt3r-JsonPw' },
  { name: 'env assignment in JSON text', text: '{"summary":"Set DB_PASSWORD=\\"RunSummaryPw4\\" in .env"}', secret: 'RunSummaryPw4' },
  { name: 'mysql -pPASSWORD', text: 'mysql -uroot -pMysqlPw2x -h 127.0.0.1 -e "select 1"', secret: 'MysqlPw2x' },
  { name: 'sshpass -p PASSWORD', text: 'sshpass -p SshPassPw7 ssh root@host uptime', secret: 'SshPassPw7' },
  { name: 'curl -u user:password', text: 'curl -sfu deploy:CurlPw3x https://ci.internal/', secret: 'CurlPw3x' },
  { name: 'curl --user user:password', text: 'curl --user admin:CurlUserPw4 https://x', secret: 'CurlUserPw4' },
  { name: 'docker login -p PASSWORD', text: 'docker login -u me -p DockerPw5x registry.example.com', secret: 'DockerPw5x' },
  {
    name: 'aws configure set',
    text: 'aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYCONFIGKEY',
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYCONFIGKEY',
  },
  { name: 'git config password', text: 'git config --global user.password GitCfgPw6', secret: 'GitCfgPw6' },
  {
    name: 'private key cut after its BEGIN line',
    text: 'head -3 key.pem\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDbvd3roDmQZNV6\nS+qG0MaZ1/yEETFqhvuJmCESJOzIhMxHx3rnMQj9jrTwdg4tBOPIOlKQ6f4q3qnb',
    secret: 'S+qG0MaZ1/yEETFqhvuJmCESJOzIhMxHx3rnMQj9jrTwdg4tBOPIOlKQ6f4q3qnb',
  },
  {
    name: 'private key cut before its END line',
    text: '[output cut]\nSr3KTLCiydbZEfBEo6Zc4+B/wf6Q/a7kQ7OZCkMu+SpDUCcdNdqLVBA6mE6Eow/X\nZvPL+o3nG8bErbXzMGLld\n-----END PRIVATE KEY-----\n$ ',
    secret: 'Sr3KTLCiydbZEfBEo6Zc4+B/wf6Q/a7kQ7OZCkMu+SpDUCcdNdqLVBA6mE6Eow/X',
  },
  { name: 'Authorization: Token', text: 'Authorization: Token HtmlTokScheme5abcdef0123456789', secret: 'HtmlTokScheme5abcdef0123456789' },
  { name: 'XML password element', text: '<db><user>app</user><password>XmlPw6x</password></db>', secret: 'XmlPw6x' },
  {
    name: 'Discord webhook URL',
    text: 'posted to https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWx',
    secret: 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrStUvWx',
  },
  {
    name: 'Heroku API key',
    text: 'HEROKU=HRKU-AA0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV_-',
    secret: 'HRKU-AA0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV_-',
  },
  {
    name: 'SECRET_KEY_BASE',
    text: 'SECRET_KEY_BASE=4f8c2e91d07b3a56f1e8c9d2b4a7f0e3c6d9b2a5f8e1c4d7',
    secret: '4f8c2e91d07b3a56f1e8c9d2b4a7f0e3c6d9b2a5f8e1c4d7',
  },
  { name: 'passphrase of several words', text: 'passphrase = correct horse battery staple', secret: 'battery staple' },
  { name: 'password in Markdown emphasis', text: '**Password:** MdPassw0rd', secret: 'MdPassw0rd' },
  {
    name: 'URL-encoded form body inside a URL',
    text: 'GET /authorize?next=%2Ftoken%3Fgrant_type%3Dpassword%26username%3Dbob%26password%3DEncPw7%2521',
    secret: 'EncPw7',
  },
  { name: 'URL-encoded JSON body', text: 'body=%7B%22api_key%22%3A%22EncKey9vL7pZr4wT8%22%7D', secret: 'EncKey9vL7pZr4wT8' },
  { name: 'Basic credentials of letters only', text: 'proxy: Basic dXNlcjpwYXNz', secret: 'dXNlcjpwYXNz' },
  { name: 'password named in Russian', text: 'пароль: RuPassw0rd', secret: 'RuPassw0rd' },
  { name: 'password named in Chinese, full-width colon', text: '密码：ZhPassw0rd', secret: 'ZhPassw0rd' },
];

/** Texts that look a little like secrets but are real data redaction must keep. */
export const NOT_SECRETS: ReadonlyArray<{ readonly name: string; readonly text: string }> = [
  { name: 'git SHA', text: 'HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8 Fix the parser' },
  { name: 'short git SHA', text: 'commit 9fceb02 (HEAD -> main)' },
  { name: 'UUID', text: 'request 123e4567-e89b-12d3-a456-426614174000 done' },
  { name: 'UUID as an id field', text: '{"id":"123e4567-e89b-12d3-a456-426614174000","status":"ok"}' },
  {
    name: 'base64 image in a tool result',
    text: `{"type":"image","data":"data:image/png;base64,${'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='.repeat(40)}"}`,
  },
  { name: 'ordinary prose', text: 'The password reset page asks for the token you received; keys are rotated monthly.' },
  { name: 'token counts', text: 'max_tokens=1000 prompt_tokens: 512 inputTokens=12' },
  { name: 'a primary key', text: 'primary key: id, sort_key=created_at' },
  { name: 'URL without a password', text: 'see https://example.com/docs?page=2#auth and git@github.com:org/repo.git' },
  { name: 'URL with a port and a path', text: 'curl http://localhost:8080/api/users' },
  { name: 'sha256 digest', text: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { name: 'file paths', text: '/home/dev/project/src/auth/token-store.ts:42:7' },
  { name: 'Basic in prose', text: 'Basic functionality works; Bearer authentication is next.' },
  { name: 'variable reference', text: 'password: ${DB_PASSWORD}' },
  {
    name: 'identifiers under key names',
    text: 'foreign_key: account_id, partition_key: tenant_region, sort_key: created_at_2024, cache_key: user:1234:profile',
  },
  { name: 'a key file path', text: 'ssh-keygen writes it; then run --ssh-key ~/.ssh/id_ed25519.pub' },
  { name: 'mysql asking for the password', text: 'mysql -u root -p shop < dump.sql' },
  { name: 'a user and group id', text: 'docker run -u 1000:1000 -p 8080:80 app' },
  { name: 'an rsync to a remote path', text: 'rsync -avu ./site host:/var/www' },
  { name: 'an ssh port', text: 'ssh -p 2222 dev@host' },
  { name: 'config of ordinary settings', text: 'git config --global user.name Ann; npm config set registry http://localhost:4873/' },
  { name: 'URL-encoded query', text: 'GET /cb?redirect=https%3A%2F%2Fexample.com%2Fdocs%3Fpage%3D2%26sort_key%3Dcreated_at&state=ok' },
  { name: 'Basic before words that are no base64 of a user and password', text: 'Basic authentication is on; Basic Auth is the default.' },
  { name: 'user names in URLs', text: 'ssh://git@github.com/o/r.git and https://deploy-bot@ci.example.com/x' },
  {
    name: 'prose naming a password in other languages',
    text: 'La contraseña debe tener 8 caracteres. Пароль должен содержать 8 символов. 密码必须至少包含8个字符。',
  },
];
