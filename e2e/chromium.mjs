// How Playwright starts Chromium here: Debian's /usr/bin/chromium, never a downloaded build.
// The flags keep it from reaching the (closed) network and let it run as root.

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
