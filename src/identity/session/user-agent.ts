import UAParser from 'ua-parser-js';

// What a person needs to recognise a session's device: browser and OS with their versions, and
// the kind of device. Parsed when sessions are listed, from the stored header: no schema for
// it, and a newer parser names old sessions better.
export interface DeviceView {
  browser: string | null;
  os: string | null;
  type: string;
}

export function describeDevice(userAgent: string | null): DeviceView {
  const { browser, os, device } = new UAParser(userAgent ?? '').getResult();
  return {
    // The major version is what a person knows ("Chrome 124"), not the build.
    browser: named(browser.name, browser.major),
    os: named(os.name, os.version),
    // ua-parser-js names no type for desktops (and for what it does not know).
    type: device.type ?? 'desktop',
  };
}

function named(name: string | undefined, version: string | undefined): string | null {
  if (!name) return null;
  return version ? `${name} ${version}` : name;
}
