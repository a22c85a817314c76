/** The adoption's options (issue 33): refused with the option's path and what it must be; a date as a Date. */
import { expect } from 'chai';

import { resolveOptions } from '../../src/index.ts';
import { refusal } from '../helpers/options.ts';

const contacts = async () => ({ email: 'someone@example.com' });

describe('options: previousAdapter and adoption', () => {
  it('refuses a previousAdapter that is not an adapter class or factory, an adoption.records that lists nothing, a closesAt that is no date', () => {
    expect(refusal({ contacts, previousAdapter: { find() {} } }).message)
      .to.equal('oidc-signout-notify: invalid option "previousAdapter": must be the previous oidc-provider adapter: a class or a factory model => Adapter');
    expect(refusal({ contacts, previousAdapter: () => ({}), adoption: { records: [] } }).message)
      .to.equal('oidc-signout-notify: invalid option "adoption.records": must be a RecordSource or a function returning an async iterable of { model, id }');
    expect(refusal({ contacts, adoption: { closesAt: 'next spring' } }).message).to.match(/^oidc-signout-notify: invalid option "adoption.closesAt": /);
    expect(resolveOptions({ contacts, adoption: { closesAt: '2027-03-01T00:00:00Z' } }).adoption).to.deep.equal({ closesAt: new Date('2027-03-01T00:00:00Z'), checkEveryMs: 10_000 });
  });

});
