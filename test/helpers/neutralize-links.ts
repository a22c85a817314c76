/** What the neutralizeLinks tests share: the expected form of an address, and tables of inputs with their expected outputs. */
import { expect } from 'chai';

import { LINK_SEPARATOR, neutralizeLinks } from '../../src/text/neutralize-links.ts';

export const W = LINK_SEPARATOR;
/** What the function should make of an address: the separator on both sides of every dot. */
export const n = (address: string): string => address.replaceAll('.', `${W}.${W}`);

/** [input, expected in the title, expected in the body (same as the title when omitted)]. */
export type Row = readonly [input: string, title: string, body?: string];

export function checkRows(rows: readonly Row[]): void {
  for (const [input, title, body = title] of rows) {
    expect(neutralizeLinks(input, 'title'), `title ${JSON.stringify(input)}`).to.equal(title);
    expect(neutralizeLinks(input, 'body'), `body ${JSON.stringify(input)}`).to.equal(body);
  }
}

/** Rows whose text is the same in the output, in both places. */
export const unchanged = (...inputs: string[]): Row[] => inputs.map((input) => [input, input]);
