import { api, must } from '../api/client';
import type { components } from '../api/schema';
import type { ScreenProps } from '../nav';
import { ErrorText, Section, useLoad } from '../ui';

type SignInBucket = components['schemas']['SignInBucketResponse'];

// Users, live sessions, and sign-ins over the last 24 hours and 7 days (GET /v1/overview, an
// aggregate the API computes from the audit log).
export default function OverviewScreen(_: ScreenProps) {
  const overview = useLoad(() => must(api.GET('/auth-api/v1/overview')), []);
  const o = overview.data;
  return (
    <>
      <h1>Overview</h1>
      <ErrorText error={overview.error} />
      {o && (
        <>
          <div class="stats">
            <p class="card">
              <span class="big">{o.users}</span> users
            </p>
            <p class="card">
              <span class="big">{o.activeSessions}</span> active sessions
            </p>
          </div>
          <Section title="Sign-ins, last 24 hours">
            <Bars buckets={o.signIns.last24h} label={(d) => `${d.getHours()}h`} />
          </Section>
          <Section title="Sign-ins, last 7 days">
            <Bars buckets={o.signIns.last7d} label={(d) => d.toLocaleDateString(undefined, { weekday: 'short' })} />
          </Section>
        </>
      )}
    </>
  );
}

// A small bar chart in SVG: succeeded above the line, failed below; the numbers in a table for
// screen readers.
function Bars({ buckets, label }: { buckets: SignInBucket[]; label: (d: Date) => string }) {
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.succeeded, b.failed)));
  const w = 100 / Math.max(buckets.length, 1);
  return (
    <figure>
      <svg viewBox="0 0 100 60" class="chart" aria-hidden="true" preserveAspectRatio="none">
        {buckets.map((b, i) => (
          <g key={b.from}>
            <rect class="ok" x={i * w + w * 0.15} width={w * 0.7} y={30 - (b.succeeded / max) * 28} height={(b.succeeded / max) * 28} />
            <rect class="failed" x={i * w + w * 0.15} width={w * 0.7} y={31} height={(b.failed / max) * 28} />
          </g>
        ))}
        <line x1="0" x2="100" y1="30.5" y2="30.5" />
      </svg>
      <figcaption>
        <table class="sr-only">
          <thead>
            <tr>
              <th>From</th>
              <th>Succeeded</th>
              <th>Failed</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr key={b.from}>
                <td>{label(new Date(b.from))}</td>
                <td>{b.succeeded}</td>
                <td>{b.failed}</td>
              </tr>
            ))}
          </tbody>
        </table>
        Succeeded (up) and failed (down) sign-ins: {buckets.reduce((n, b) => n + b.succeeded, 0)} and {buckets.reduce((n, b) => n + b.failed, 0)}.
      </figcaption>
    </figure>
  );
}
