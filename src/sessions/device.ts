import Bowser from 'bowser';

/** A browser and its system as people name them: "Firefox" on "Windows", "Safari" on "iPhone". */
export interface Device {
  browser?: string | undefined;
  os?: string | undefined;
}

/**
 * The device of a User-Agent in plain words (bowser; docs/dependencies.md "Dependencies".
 * A phone or tablet is named by its model where the User-Agent gives one
 * (iPhone, iPad), else by its system. Nothing is guessed: an unknown part is
 * left out and the page says so in words of its own.
 */
export function describeDevice(userAgent: string | undefined): Device {
  if (!userAgent) return {};
  const { browser, os, platform } = Bowser.parse(userAgent);
  const model = platform.type !== 'desktop' && platform.model && /^(iPhone|iPad|iPod)$/.test(platform.model) ? platform.model : undefined;
  return {
    browser: browser.name || undefined,
    os: model ?? (os.name || undefined),
  };
}
