import { expect } from 'chai';

import { createSignoutNotify, resolveOptions } from '../../src/index.ts';

/** The TypeError thrown for bad options. */
export function refusal(input: unknown): TypeError {
  let caught: unknown;
  try {
    createSignoutNotify(input as Parameters<typeof createSignoutNotify>[0]);
  } catch (err) {
    caught = err;
  }
  expect(caught, 'createSignoutNotify threw').to.be.instanceOf(TypeError);
  // resolveOptions, exported on its own, gives the same answer.
  expect(() => resolveOptions(input)).to.throw(TypeError, (caught as TypeError).message);
  return caught as TypeError;
}
