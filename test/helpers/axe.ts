/**
 * axe-core (npm) in the pages under test: injected through the DevTools
 * protocol (page.evaluate), which the pages' strict CSP does not govern, so
 * the pages are checked exactly as they are served.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

interface AxeResult { violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[] }

/** Serious and critical axe violations of the page as it is now, as readable lines. */
export async function axeProblems(page: Page): Promise<string[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate('axe.run(document, { resultTypes: ["violations"] })') as AxeResult;
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Whether the page scrolls sideways (document wider than the viewport). */
export async function overflow(page: Page): Promise<string[]> {
  const [scroll, inner] = await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]') as [number, number];
  return scroll <= inner ? [] : [`scrollWidth ${scroll} > innerWidth ${inner}`];
}

/**
 * Checks the page at phone width (axe, no sideways scrolling) and at desktop
 * width (axe); returns every problem, labelled, and leaves the phone width.
 */
export async function checkPage(page: Page, label: string): Promise<string[]> {
  const found: string[] = [];
  await page.setViewportSize(DESKTOP);
  found.push(...(await axeProblems(page)).map((p) => `${label} (desktop): ${p}`));
  await page.setViewportSize(PHONE);
  found.push(...(await axeProblems(page)).map((p) => `${label} (390 px): ${p}`));
  found.push(...(await overflow(page)).map((p) => `${label} (390 px): ${p}`));
  return found;
}
