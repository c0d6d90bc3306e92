import { AppError } from '../common/errors.js';

// The catalogue entry lives in src/common/errors.ts.
export const ssoNotConfigured = () => new AppError('SsoNotConfigured', 'single sign-on is not configured');
