/** neutralizeLinks: characters smuggled next to a dot, IDN domains, text written without spaces, combining marks, long hosts and the other full stops. */
import { expect } from 'chai';

import { checkRows, n, unchanged, W } from '../helpers/neutralize-links.ts';

describe('neutralizeLinks', () => {
  it('removes invisible and bidi-control characters next to a dot or @ first, then separates', () => {
    checkRows([
      ['example\u200B.com', n('example.com')],
      ['example.\u2060com', n('example.com')],
      ['user\u202E@example.com', `user@${n('example.com')}`],
      ['user@\u2066example.com', `user@${n('example.com')}`],
      ['example\u00AD.com', n('example.com')],
      ['example\uFEFF.\u200Dcom', n('example.com')],
      ['10\u200C.0.0.1', n('10.0.0.1')],
      ['evil\u2066\u2069.com', n('evil.com')],
      ['evil.\u061Ccom', n('evil.com')],
      ['evil\u200E\u200F.com', n('evil.com')],
      ['evil\u2064.com', n('evil.com')],
      ['evil\u202A\u202B\u202C\u202D.com', n('evil.com')],
      // Next to a dot that is no address: removed all the same.
      ['report\u200B.pdf', 'report.pdf'],
      // Elsewhere: kept.
      ['exa\u200Bmple.com', `exa\u200B${n('mple.com')}`],
      ['a\u200Bb \u202Ex\u202C', 'a\u200Bb \u202Ex\u202C'],
      // Other format characters are not on the list.
      ['evil\u180E.com', 'evil\u180E.com'],
      // Already separated text: the separators are removed and put back, the same.
      [n('example.com'), n('example.com')],
      // Removed before the https:// address is delimited: it runs on, as written.
      ['https://good.com\u200B.evil.com', `https://${n('good.com.evil.com')}`, 'https://good.com.evil.com'],
    ]);
  });

  it('separates Unicode (IDN) and punycode domains in known zones', () => {
    checkRows([
      ['bücher.de', `bücher${W}.${W}de`],
      ['BÜCHER.DE', n('BÜCHER.DE')],
      ['bu\u0308cher.de', n('bu\u0308cher.de')], // decomposed: judged in NFC, written as it came
      ['xn--bcher-kva.de', n('xn--bcher-kva.de')],
      ['пример.рф', n('пример.рф')],
      ['ПРИМЕР.РФ', n('ПРИМЕР.РФ')],
      ['example.xn--p1ai', n('example.xn--p1ai')],
      ['中国.cn', n('中国.cn')],
      ['例子.中国', n('例子.中国')],
      ['한국.kr', n('한국.kr')],
    ]);
  });

  it('finds the domain inside text written without spaces', () => {
    checkRows([
      ['请访问example.com了解', `请访问${n('example.com')}了解`],
      ['请访问example.com或者evil.com了解', `请访问${n('example.com')}或者${n('evil.com')}了解`],
      ['example.comにアクセス', `${n('example.com')}にアクセス`],
      ['example.com에서', `${n('example.com')}에서`],
      ['访问10.0.0.1了解', `访问${n('10.0.0.1')}了解`],
      ...unchanged('中.中.中', '请看report.pdf了解'),
    ]);
  });

  it('finds addresses inside Thai, Lao, Khmer and Myanmar text (written without spaces)', () => {
    checkRows([
      ['กรุณาไปที่example.comเพื่อดู', `กรุณาไปที่${n('example.com')}เพื่อดู`],
      ['ກະລຸນາໄປທີ່example.comເພື່ອ', `ກະລຸນາໄປທີ່${n('example.com')}ເພື່ອ`],
      ['សូមចូលទៅexample.comដើម្បី', `សូមចូលទៅ${n('example.com')}ដើម្បី`],
      ['ကျေးဇူးပြု၍example.comသို့', `ကျေးဇူးပြု၍${n('example.com')}သို့`],
    ]);
  });

  it('reads a decomposed mark at the end of a label as part of it, long hosts up to 255 characters, and a scheme glued to a domain', () => {
    /** A dotted name of exactly `length` characters under .com, in labels of at most 63. */
    const host = (length: number) => {
      const labels: string[] = [];
      for (let left = length - 4; left > 0; left -= 64) labels.push('a'.repeat(Math.min(63, left)));
      return `${labels.join('.')}.com`;
    };
    checkRows([
      ['cafe\u0301.com', n('cafe\u0301.com')],
      ['see cafe\u0301.com now', `see ${n('cafe\u0301.com')} now`],
      [`${'a'.repeat(36)}.com`, n(`${'a'.repeat(36)}.com`)],
      [host(255), n(host(255))],
      ...unchanged(host(256)),
      ['evil.httpbin.orghttps://x', `${n('evil.httpbin.org')}https://x`],
      ['evil.httpbin.org.http://x', `${n('evil.httpbin.org')}.http://x`],
      // Without `://` a trailing `http` is part of the name: `orghttp` is no zone.
      ...unchanged('mail.orghttp and mail.comhttps'),
    ]);
    expect(host(255)).to.have.length(255);
    expect(host(256)).to.have.length(256);
  });

  it('counts the ideographic, fullwidth and halfwidth ideographic full stops as dots, as URL parsers do', () => {
    for (const stop of ['\u3002', '\uFF0E', '\uFF61']) {
      // The reference: WHATWG URL reads the stop as a dot.
      expect(new URL(`https://evil${stop}com/`).host).to.equal('evil.com');
      const s = (address: string) => address.replaceAll(stop, `${W}${stop}${W}`);
      checkRows([
        [`evil${stop}com`, s(`evil${stop}com`)],
        [`visit www${stop}evil${stop}co${stop}uk today`, `visit ${s(`www${stop}evil${stop}co${stop}uk`)} today`],
        [`write to help@evil${stop}com`, `write to help@${s(`evil${stop}com`)}`],
        [`10${stop}0${stop}0${stop}1`, s(`10${stop}0${stop}0${stop}1`)],
        [`请访问evil${stop}com了解`, `请访问${s(`evil${stop}com`)}了解`],
        [`mixed evil${stop}example.com`, `mixed ${s(`evil${stop}example`).replaceAll('.', `${W}.${W}`)}${W}.${W}com`],
        [`evil\u200B${stop}com`, s(`evil${stop}com`)],
        ...unchanged(`report${stop}pdf`, `1${stop}2`, `host${stop}unknownzone`, `1${stop}2${stop}3${stop}256`),
      ]);
    }
    // A Chinese sentence's full stop between words is no address.
    checkRows(unchanged('我爱中国。中国很大', '谢谢。再见'));
  });
});
