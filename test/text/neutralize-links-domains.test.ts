/** neutralizeLinks: bare domains, e-mail addresses and IPv4 addresses, and what is no address; zones from the ICANN section of the public suffix list. */
import { expect } from 'chai';
import { parse } from 'tldts';

import { isKnownZoneDomain } from '../../src/text/neutralize-links.ts';
import { checkRows, n, unchanged, W, type Row } from '../helpers/neutralize-links.ts';

describe('neutralizeLinks', () => {
  it('separates every dot of a bare domain or IPv4 address, between punctuation or at the end of a sentence', () => {
    checkRows([
      ['evil.example.com', `evil${W}.${W}example${W}.${W}com`],
      ['Log in at www.evil.com today', `Log in at ${n('www.evil.com')} today`],
      ['bank.co.uk', n('bank.co.uk')],
      ['EVIL.Example.COM', n('EVIL.Example.COM')],
      ['server 192.168.0.1 answered', `server ${n('192.168.0.1')} answered`],
      ['Visit example.com.', `Visit ${n('example.com')}.`],
      ['(example.com), "example.com"; example.com!', `(${n('example.com')}), "${n('example.com')}"; ${n('example.com')}!`],
      ['.example.com', `.${n('example.com')}`],
      // Hyphens and underscores at the edges are punctuation, not part of the name.
      ['--example.com-- and _example.com_', `--${n('example.com')}-- and _${n('example.com')}_`],
      ['-evil.com', `-${n('evil.com')}`],
      ['--.example.com', `--.${n('example.com')}`],
      ['_dmarc.example.com', n('_dmarc.example.com')],
      // `.next` is an ICANN zone: a sentence without a space after its dot is a domain too.
      ['the end.Next', `the ${n('end.Next')}`],
    ]);
  });

  it('separates the domain of an e-mail address (and a dotted local part only when it is itself a domain)', () => {
    checkRows([
      ['write to user@example.com', `write to user@${n('example.com')}`],
      ['user@mail.example.com', `user@mail${W}.${W}example${W}.${W}com`],
      ['first.last@mail.example.org', `first.last@${n('mail.example.org')}`],
      ['mailto:help@example.io', `mailto:help@${n('example.io')}`],
      ['john.me@example.com', `${n('john.me')}@${n('example.com')}`],
      ['root@10.0.0.1', `root@${n('10.0.0.1')}`],
    ]);
  });

  it('separates a domain or IPv4 address followed by a port or a path', () => {
    checkRows([
      ['example.com:8080/path/x.html?q=1', `${n('example.com')}:8080/path/x.html?q=1`],
      ['evil.com/login.php', `${n('evil.com')}/login.php`],
      ['10.0.0.1:22', `${n('10.0.0.1')}:22`],
      ['see 10.0.0.1.', `see ${n('10.0.0.1')}.`],
    ]);
  });

  it('zones that are also file extensions are real zones: readme.md, setup.py and the like are separated', () => {
    checkRows([
      ['readme.md', `readme${W}.${W}md`],
      ['setup.py', `setup${W}.${W}py`],
      ...['main.rs', 'archive.zip', 'run.sh', 'clip.mov', 'index.md', 'Makefile.pl'].map((t): Row => [t, n(t)]),
    ]);
  });

  it('leaves versions, file names without a zone, unknown zones and partial names unchanged', () => {
    checkRows(
      unchanged(
        'report.pdf', 'notes.txt', '1.2', 'version 2.5', 'a.b', 'host.unknownzone', 'bücher.unknownzone',
        'config.json', 'archive.tar.gz', 'index.html', 'v1.2.3', 'e.g. i.e. U.S.A.', 'example.comx',
        'example.test', 'printer.local', 'example.invalid', 'evil.example', 'example.localhost',
        // A public suffix alone has no registrable domain (`co.uk`; `*.ck` is a wildcard rule).
        'co.uk', 'a.ck',
        // Not hostnames (tldts validation): a label may not end with a hyphen.
        'a-.com',
        'ends with a dot.', '...', '. . .', '',
      ),
    );
  });

  it('treats exactly four segments of 0..255 as IPv4, a four-part version number too', () => {
    checkRows([
      ['1.2.3.4', `1${W}.${W}2${W}.${W}3${W}.${W}4`],
      ['version 1.2.3.4', `version ${n('1.2.3.4')}`],
      ['10.0.0.255', n('10.0.0.255')],
      ['0.0.0.0 255.255.255.255', `${n('0.0.0.0')} ${n('255.255.255.255')}`],
      // Leading zeros, up to three digits: browsers read them as an address.
      ['01.2.3.4', n('01.2.3.4')],
      ['010.000.001.099', n('010.000.001.099')],
      ...unchanged(
        '1.2.3.256', '1.2.3.4.5', '1.2.3', '256.1.1.1', '999.999.999.999', '0001.2.3.4', '1.2.3.-4',
        'v1.2.3.4', '1.2.3.4-beta', '١.٢.٣.٤',
      ),
    ]);
  });

  it('decides zones from the ICANN section only: foo.github.io is a domain under .io (trap 14)', () => {
    // With private domains allowed, tldts calls github.io a private suffix and
    // foo.github.io non-ICANN; in the ICANN section it is the domain github.io under io.
    const withPrivate = parse('foo.github.io', { allowPrivateDomains: true });
    expect([withPrivate.publicSuffix, withPrivate.isIcann, withPrivate.isPrivate]).to.deep.equal(['github.io', false, true]);
    const icann = parse('foo.github.io', { allowPrivateDomains: false });
    expect([icann.publicSuffix, icann.domain, icann.isIcann]).to.deep.equal(['io', 'github.io', true]);
    // tldts' isIp accepts impossible addresses; the module does not use it.
    expect(parse('999.999.999.999').isIp).to.equal(true);
    checkRows([
      ['foo.github.io', `foo${W}.${W}github${W}.${W}io`],
      ['foo.blogspot.com', n('foo.blogspot.com')],
      ['999.999.999.999', '999.999.999.999'],
    ]);
  });

  it('isKnownZoneDomain: whole names under an ICANN public suffix, lower-cased NFC', () => {
    for (const host of [
      'example.com', 'EXAMPLE.COM', 'www.example.co.uk', 'readme.md', 'setup.py', 'archive.zip', 'foo.github.io',
      'bücher.de', 'BÜCHER.DE', 'bu\u0308cher.de', 'пример.рф', '例子.中国', 'xn--bcher-kva.de', '_dmarc.example.com',
    ]) {
      expect(isKnownZoneDomain(host), host).to.equal(true);
    }
    for (const host of [
      'report.pdf', 'notes.txt', 'a.b', '1.2', 'host.unknownzone', 'co.uk', 'a.ck', '1.2.3.4', '999.999.999.999',
      'example.test', 'evil.com/x', 'evil.com:80', 'example.com.', 'a b.com', '-evil.com', 'evil-.com',
      `${'a'.repeat(64)}.com`, `${'a.'.repeat(127)}com`, 'com', '',
    ]) {
      expect(isKnownZoneDomain(host), host).to.equal(false);
    }
  });
});
