import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Addresses a request to a URL someone else chose must not reach: this host, the private
// networks behind it and the cloud's metadata service (SSRF). IPv4 and IPv6, with IPv4 written
// inside IPv6 (mapped, NAT64) judged as the IPv4 it carries.
const REFUSED: ReadonlyArray<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'this network'],
  ['10.0.0.0', 8, 'ipv4', 'a private network'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'a private network'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'ipv4', 'a private network'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'a private network (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = REFUSED.map(([network, prefix, family, why]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, why };
});

// IPv4 carried in an IPv6 address: ::ffff:a.b.c.d (mapped), 64:ff9b::a.b.c.d (NAT64), ::a.b.c.d.
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

// Why an IP address may not be called, or undefined when it may.
export function refusedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (!family) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4) return refusedAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return lists.find((l) => l.family === type && l.list.check(address, type))?.why;
}

export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
  constructor(
    readonly host: string,
    readonly address: string,
    readonly why: string,
  ) {
    super(`${host} resolves to ${address} (${why})`);
  }
}

// A `lookup` for http.request / net.connect that resolves as usual, then refuses the connection
// when any address the name has is one of the above: checked at the moment of every connection,
// so a name that changes its answer after it was accepted (DNS rebinding) is still refused.
export function guardedLookup(resolve: typeof dnsLookup = dnsLookup): LookupFunction {
  return ((hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const all = addresses as LookupAddress[];
      for (const a of all) {
        const why = refusedAddress(a.address);
        if (why) return callback(new RefusedAddressError(hostname, a.address, why), '', 0);
      }
      if ((options as { all?: boolean }).all) return callback(null, all);
      callback(null, all[0].address, all[0].family);
    });
  }) as LookupFunction;
}

// Every address a name has, resolved now (for a check when a URL is accepted).
export function resolveAll(hostname: string): Promise<string[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses.map((a) => a.address)))));
}
