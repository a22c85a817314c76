/**
 * SCAN's MATCH means the same on Redis and the embedded store, an escaped
 * glob character included: deleteAccount finds the keys of an account id
 * that holds `*`, `?`, `[` or `\` and no one else's.
 */
import { expect } from 'chai';

import { globLiteral } from '../../src/sites/delete-account.ts';
import * as commands from '../../src/store/commands.ts';
import { STORE_KINDS, uniquePrefix } from '../helpers/redis.ts';

for (const kind of STORE_KINDS) {
  describe(`SCAN MATCH with escaped glob characters (${kind.name} store)`, () => {
    it('matches an account id with glob characters literally', async () => {
      const made = kind.make(uniquePrefix(`scan-${kind.name}`));
      try {
        const { store } = made;
        const ids = ['a*b', 'aXXb', 'a?[c]\\d', 'aZ[c]\\d', 'plain.id'];
        for (const id of ids) await store.run(commands.hset(), [`${store.prefix}account:{${id}}:prefs`], ['locale', 'en']);
        for (const id of ids) {
          const found: string[] = [];
          for await (const key of store.scan(`account:{${globLiteral(id)}}*`)) found.push(key);
          expect(found, id).to.deep.equal([`${store.prefix}account:{${id}}:prefs`]);
        }
      } finally {
        await made.done();
      }
    });
  });
}
