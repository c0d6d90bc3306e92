// The WebAuthn JSON forms the service speaks (base64url strings) to and from what
// navigator.credentials takes and gives (ArrayBuffers). Written by hand: a few lines, where
// @simplewebauthn/browser would add a dependency, and PublicKeyCredential.parse*FromJSON is
// missing from older browsers.
type Json = Record<string, unknown>;

export function fromBase64url(text: string): ArrayBuffer {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

export function toBase64url(buffer: ArrayBuffer | ArrayBufferView): string {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const descriptors = (list: unknown) => ((list as { id: string; type: 'public-key'; transports?: AuthenticatorTransport[] }[] | undefined) ?? []).map((d) => ({ ...d, id: fromBase64url(d.id) }));

export function requestOptions(json: Json): PublicKeyCredentialRequestOptions {
  return { ...(json as object), challenge: fromBase64url(json.challenge as string), allowCredentials: descriptors(json.allowCredentials) } as PublicKeyCredentialRequestOptions;
}

export function creationOptions(json: Json): PublicKeyCredentialCreationOptions {
  const user = json.user as { id: string; name: string; displayName: string };
  return {
    ...(json as object),
    challenge: fromBase64url(json.challenge as string),
    user: { ...user, id: fromBase64url(user.id) },
    excludeCredentials: descriptors(json.excludeCredentials),
  } as PublicKeyCredentialCreationOptions;
}

// What register/verify and login/verify take: the credential in WebAuthn's JSON form.
export function credentialJson(credential: PublicKeyCredential): Json {
  const r = credential.response as AuthenticatorAttestationResponse & AuthenticatorAssertionResponse;
  const response: Json = { clientDataJSON: toBase64url(r.clientDataJSON) };
  if ('attestationObject' in r && r.attestationObject) {
    response.attestationObject = toBase64url(r.attestationObject);
    response.transports = r.getTransports?.() ?? [];
  } else {
    response.authenticatorData = toBase64url(r.authenticatorData);
    response.signature = toBase64url(r.signature);
    if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
  }
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response,
    clientExtensionResults: credential.getClientExtensionResults(),
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
  };
}

export const passkeysSupported = () => typeof PublicKeyCredential !== 'undefined' && !!navigator.credentials;
