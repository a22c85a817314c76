/** neutralizeLinks: exact results for 2,000-character adversarial inputs. */
import { expect } from 'chai';

import { neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { n, W } from '../helpers/neutralize-links.ts';

describe('neutralizeLinks', () => {
  it('gives the exact result for 2,000-character adversarial inputs (their speed is measured by npm run bench, operation 7)', () => {
    const unit = 'x.com 1.2.3.4 https://a.b/c.com http://e.com/f.g u@h.io v1.2 report.pdf setup.py a\u200B.b ';
    const unitTitle = `${n('x.com')} ${n('1.2.3.4')} https://a.b/${n('c.com')} http://${n('e.com')}/f.g u@${n('h.io')} v1.2 report.pdf ${n('setup.py')} a.b `;
    const unitBody = `${n('x.com')} ${n('1.2.3.4')} https://a.b/c.com http://${n('e.com')}/f.g u@${n('h.io')} v1.2 report.pdf ${n('setup.py')} a.b `;
    const times = Math.floor(2000 / unit.length);
    const pad = ' '.repeat(2000 - unit.length * times);
    const cases: [name: string, input: string, title: string, body?: string][] = [
      ["'a.'.repeat(1000)", 'a.'.repeat(1000), 'a.'.repeat(1000)],
      ["'1.'.repeat(1000)", '1.'.repeat(1000), '1.'.repeat(1000)],
      ["'a.com '.repeat(333)", 'a.com '.repeat(333), `a${W}.${W}com `.repeat(333)],
      ['mixed', unit.repeat(times) + pad, unitTitle.repeat(times) + pad, unitBody.repeat(times) + pad],
      ["'a.com'.repeat(400) (one 2,000-character run)", 'a.com'.repeat(400), 'a.com'.repeat(400)],
      ["'x.'.repeat(998) + 'com' (too long for a name)", `${'x.'.repeat(998)}com`, `${'x.'.repeat(998)}com`],
      ["'a'.repeat(1999) + '.'", `${'a'.repeat(1999)}.`, `${'a'.repeat(1999)}.`],
      ["'-'.repeat(1996) + '.com'", `${'-'.repeat(1996)}.com`, `${'-'.repeat(1996)}.com`],
      ["'h.'.repeat(1000)", 'h.'.repeat(1000), 'h.'.repeat(1000)],
      ["'https://'.repeat(250)", 'https://'.repeat(250), 'https://'.repeat(250)],
      ["'中.'.repeat(1000)", '中.'.repeat(1000), '中.'.repeat(1000)],
      ["'中a.com'.repeat(333)", '中a.com'.repeat(333), `中a${W}.${W}com`.repeat(333)],
      ["'\\u200B.'.repeat(1000)", '\u200B.'.repeat(1000), '.'.repeat(1000)],
      ["'\\u200B'.repeat(2000)", '\u200B'.repeat(2000), '\u200B'.repeat(2000)],
    ];
    // 250 different domains per text, and 8 such texts in turn: 2,000 names, more than the
    // memo keeps, so every call parses every name with tldts.
    const distinct = (k: number): string[] =>
      Array.from({ length: 250 }, (_, i) => `${String.fromCharCode(97 + k)}${i.toString(36).padStart(2, '0')}.com`);
    for (let k = 0; k < 8; k++) {
      cases.push([`250 distinct domains (text ${k + 1} of 8)`, `${distinct(k).join(' ')} `, `${distinct(k).map(n).join(' ')} `]);
    }
    for (const [name, input, title, body = title] of cases) {
      expect(input.length, name).to.be.within(1998, 2000);
      expect(neutralizeLinks(input, 'title'), `${name} title`).to.equal(title);
      expect(neutralizeLinks(input, 'body'), `${name} body`).to.equal(body);
    }
  });
});
