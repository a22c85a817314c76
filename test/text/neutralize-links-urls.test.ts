/** neutralizeLinks: the separator, and addresses with a scheme (https:// in the body arrives as written). */
import { expect } from 'chai';

import { LINK_SEPARATOR, neutralizeLinks } from '../../src/text/neutralize-links.ts';
import { checkRows, n } from '../helpers/neutralize-links.ts';

describe('neutralizeLinks', () => {
  it('uses U+2060 WORD JOINER, on both sides of every dot', () => {
    expect(LINK_SEPARATOR).to.equal('\u2060');
    expect(neutralizeLinks('example.com', 'title')).to.equal('example\u2060.\u2060com');
    expect(neutralizeLinks('10.0.0.1', 'body')).to.equal('10\u2060.\u20600\u2060.\u20600\u2060.\u20601');
  });

  it('https:// in the body arrives exactly as written; in the title it is separated', () => {
    checkRows([
      [
        'Details: https://evil.example.com/a.b/c.com?ip=10.0.0.1#x.org now',
        `Details: https://${n('evil.example.com')}/a.b/${n('c.com')}?ip=${n('10.0.0.1')}#${n('x.org')} now`,
        'Details: https://evil.example.com/a.b/c.com?ip=10.0.0.1#x.org now',
      ],
      ['HTTPS://Evil.Example.COM/', `HTTPS://${n('Evil.Example.COM')}/`, 'HTTPS://Evil.Example.COM/'],
      [
        '(https://bücher.de/straße.html), <https://xn--bcher-kva.de>.',
        `(https://${n('bücher.de')}/straße.html), <https://${n('xn--bcher-kva.de')}>.`,
        '(https://bücher.de/straße.html), <https://xn--bcher-kva.de>.',
      ],
      [
        '请访问https://example.com/a.com了解',
        `请访问https://${n('example.com')}/${n('a.com')}了解`,
        '请访问https://example.com/a.com了解',
      ],
      ['https://1.2.3.4:8443/', `https://${n('1.2.3.4')}:8443/`, 'https://1.2.3.4:8443/'],
    ]);
  });

  it('body: an https:// address ends where a URL cannot go on; what follows is judged again', () => {
    checkRows([
      ['https://good.com<evil.com>', `https://${n('good.com')}<${n('evil.com')}>`, `https://good.com<${n('evil.com')}>`],
      ['https://good.com"evil.com"', `https://${n('good.com')}"${n('evil.com')}"`, `https://good.com"${n('evil.com')}"`],
      ['https://good.com\nevil.com', `https://${n('good.com')}\n${n('evil.com')}`, `https://good.com\n${n('evil.com')}`],
      // A zero-width space that touches no dot stays, and ends the address.
      ['https://good.com\u200Bevil.com', `https://${n('good.com')}\u200B${n('evil.com')}`, `https://good.com\u200B${n('evil.com')}`],
      // Non-ASCII punctuation ends it (a sentence goes on); non-ASCII letters do not (IRIs).
      ['请访问https://good.com，或者evil.com。', `请访问https://${n('good.com')}，或者${n('evil.com')}。`, `请访问https://good.com，或者${n('evil.com')}。`],
      ['«https://good.com»evil.com', `«https://${n('good.com')}»${n('evil.com')}`, `«https://good.com»${n('evil.com')}`],
      ['https://bücher.de/straße/evil.com', `https://${n('bücher.de')}/straße/${n('evil.com')}`, 'https://bücher.de/straße/evil.com'],
    ]);
  });

  it('body: only an address that begins with https:// is exempt (not glued, not another scheme)', () => {
    checkRows([
      // Glued to a word or to a domain: not an address beginning with https://.
      ['xhttps://evil.com/', `xhttps://${n('evil.com')}/`],
      ['evil.com.https://good.com/a.com', `${n('evil.com')}.https://${n('good.com')}/${n('a.com')}`],
      ['evil.comhttps://good.com/', `${n('evil.com')}https://${n('good.com')}/`],
      ['evil.comhttp://good.com/', `${n('evil.com')}http://${n('good.com')}/`],
      // Not https: long s, backslashes, other schemes.
      ['httpſ://evil.com', `httpſ://${n('evil.com')}`],
      ['https:\\\\evil.com', `https:\\\\${n('evil.com')}`],
      ['ftp://evil.com/x', `ftp://${n('evil.com')}/x`],
    ]);
  });

  it('http:// addresses are separated in the title and in the body', () => {
    checkRows([
      ['http://evil.example.com/path', `http://${n('evil.example.com')}/path`],
      ['http://10.0.0.1:8080/admin.php', `http://${n('10.0.0.1')}:8080/admin.php`],
      ['HTTP://EVIL.COM', `HTTP://${n('EVIL.COM')}`],
      ['http://user:pw@evil.com/login.html', `http://user:pw@${n('evil.com')}/login.html`],
      ['see http://evil.com/a.com.', `see http://${n('evil.com')}/${n('a.com')}.`],
    ]);
  });
});
