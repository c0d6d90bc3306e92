import { describe, expect, it } from '@jest/globals';
import { describeDevice } from './user-agent.js';

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const SAFARI_IPAD = 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const FIREFOX_ANDROID = 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0';

describe('describeDevice', () => {
  it('names browser, OS and device type from real user agents', () => {
    expect(describeDevice(CHROME_WINDOWS)).toEqual({ browser: 'Chrome 124', os: 'Windows 10', type: 'desktop' });
    expect(describeDevice(SAFARI_IPHONE)).toEqual({ browser: 'Mobile Safari 17', os: 'iOS 17.4', type: 'mobile' });
    expect(describeDevice(SAFARI_IPAD)).toEqual({ browser: 'Mobile Safari 17', os: 'iOS 17.4', type: 'tablet' });
    expect(describeDevice(FIREFOX_ANDROID)).toEqual({ browser: 'Firefox 125', os: 'Android 14', type: 'mobile' });
  });

  it('says desktop with nothing else for what it cannot name, or no header at all', () => {
    expect(describeDevice('curl/8.5.0')).toEqual({ browser: null, os: null, type: 'desktop' });
    expect(describeDevice(null)).toEqual({ browser: null, os: null, type: 'desktop' });
  });
});
