// Whether this browser can use passkeys at all: the ceremonies themselves are @svc/client's
// (client.passkey.*, through @simplewebauthn/browser, loaded when first used).
export const passkeysSupported = () => typeof PublicKeyCredential !== 'undefined' && !!navigator.credentials;
