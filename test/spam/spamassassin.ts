/**
 * `npm run test:spam` (CI runs it after `npm test`): the service's letters as
 * SpamAssassin scores them offline (`spamassassin -L -t`, Debian's package,
 * no network tests, no Bayes), in every language and category. Notification
 * letters must score 0 or less and keep their unsubscribe link and the reason
 * the person gets them; so must the sign-in code letter. A control letter
 * with the old "Stop these emails" wording must score above 0, so the check
 * can fail. Kept out of `npm test`, which needs nothing but Redis.
 */
import { spawnSync } from 'node:child_process';

import { LOCALES, t } from '../../src/i18n/index.ts';
import { CATEGORIES } from '../../src/notify/categories.ts';
import { codeMessage, notificationMessage, theftMessage } from './letters.ts';

const ARGS = ['-L', '-t', '--cf=use_bayes 0', '--cf=bayes_auto_learn 0'];

function score(raw: string): { score: number; tests: string } {
  const run = spawnSync('spamassassin', ARGS, { input: raw, encoding: 'utf8', timeout: 120_000 });
  if (run.error || run.status !== 0) {
    const why = (run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
      ? 'spamassassin is not installed (Debian: apt-get install -y spamassassin; .ci/run installs it)'
      : `spamassassin failed: ${run.error?.message ?? run.stderr}`;
    console.error(`test:spam: ${why}`);
    process.exit(1);
  }
  const status = /^X-Spam-Status: \w+, score=(-?[\d.]+) required=[\d.]+ tests=([\s\S]*?) autolearn/m.exec(run.stdout);
  if (!status) throw new Error(`no X-Spam-Status in spamassassin's answer:\n${run.stdout.slice(0, 2000)}`);
  return { score: Number(status[1]), tests: status[2]!.replace(/\s+/g, '') };
}

let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, detail: string): void {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name} (${detail})`);
}

for (const locale of LOCALES) {
  for (const category of CATEGORIES) {
    const raw = await notificationMessage(locale, category);
    const { score: s, tests } = score(raw);
    const headers = raw.slice(0, raw.indexOf('\n\n')).replace(/\n[ \t]+/g, ' ');
    const keeps = /^List-Unsubscribe: <https:\/\/id\.example\/unsubscribe\/[^>]+>$/m.test(headers) && /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m.test(headers);
    check(`notification letter, ${locale}, ${category}: score ≤ 0`, s <= 0, `score ${s}: ${tests}`);
    check(`notification letter, ${locale}, ${category}: keeps its unsubscribe headers`, keeps, 'List-Unsubscribe, List-Unsubscribe-Post');
  }
  const code = score(await codeMessage(locale));
  check(`sign-in code letter, ${locale}: score ≤ 0`, code.score <= 0, `score ${code.score}: ${code.tests}`);
  const theft = score(await theftMessage(locale));
  check(`theft notice letter, ${locale}: score ≤ 0`, theft.score <= 0, `score ${theft.score}: ${theft.tests}`);
}

// The reason for receipt and the unsubscribe link are still in the letter's words.
const english = await notificationMessage('en', 'transactional');
check('the letter says why the person gets it', english.includes('You receive this because you signed in to Northwind Shop'), 'notify.why');
check('the letter links its unsubscribe page', english.includes(t('en', 'notify.stop')) && english.includes('https://id.example/unsubscribe/'), 'notify.stop');

// Control: the scorer sees what it should.
const control = score(english.replaceAll(t('en', 'notify.stop'), 'Stop these emails'));
check('control: the old wording "Stop these emails" scores above 0', control.score > 0, `score ${control.score}: ${control.tests}`);

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
