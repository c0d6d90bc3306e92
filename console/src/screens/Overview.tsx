import { api, must } from '../api/client';
import type { components } from '../api/schema';
import type { ScreenProps } from '../nav';
import { ErrorText, noun, plural, Scope, Section, useLoad } from '../ui';

type SignInBucket = components['schemas']['SignInBucketResponse'];

// Users, live sessions, and sign-ins over the last 24 hours and 7 days (GET /v1/overview, an
// aggregate the API computes from the audit log).
export default function OverviewScreen({ session }: ScreenProps) {
  const overview = useLoad(() => must(api.GET('/auth-api/v1/overview')), []);
  const o = overview.data;
  return (
    <>
      <h1>Overview</h1>
      <Scope session={session} />
      <ErrorText error={overview.error} />
      {o && (
        <>
          <div class="stats">
            <p class="card">
              <span class="big">{o.users}</span> {noun(o.users, 'user')}
            </p>
            <p class="card">
              <span class="big">{o.activeSessions}</span> {noun(o.activeSessions, 'active session')}
            </p>
          </div>
          <Section title="Sign-ins, last 24 hours">
            {/* hours in the browser's time; a label every third hour, so they fit a phone */}
            <Bars buckets={o.signIns.last24h} unit="hour" label={(d) => `${String(d.getHours()).padStart(2, '0')}:00`} every={3} />
          </Section>
          <Section title="Sign-ins, last 7 days">
            {/* the API's days are UTC days */}
            <Bars buckets={o.signIns.last7d} unit="day" label={(d) => d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', timeZone: 'UTC' })} every={1} />
          </Section>
        </>
      )}
    </>
  );
}

// A bar chart: succeeded sign-ins above the line, failed below, on one scale; the y axis gives
// the scale's top both ways, the x axis the start of each period (`every` n-th labelled). The
// numbers are in a table for screen readers.
function Bars({ buckets, unit, label, every }: { buckets: SignInBucket[]; unit: string; label: (d: Date) => string; every: number }) {
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.succeeded, b.failed)));
  const height = (n: number) => `${(n / max) * 100}%`;
  const succeeded = buckets.reduce((n, b) => n + b.succeeded, 0);
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  return (
    <figure class="chart">
      <div class="chart-plot" aria-hidden="true">
        <div class="y-axis">
          <span>{max}</span>
          <span>0</span>
          <span>{max}</span>
        </div>
        <div class="bars">
          {buckets.map((b) => (
            <div class="bar" key={b.from} title={`${label(new Date(b.from))}: ${b.succeeded} succeeded, ${b.failed} failed`}>
              <span class="up">
                <span class="ok" style={{ height: height(b.succeeded) }} />
              </span>
              <span class="down">
                <span class="failed" style={{ height: height(b.failed) }} />
              </span>
            </div>
          ))}
        </div>
        <div class="x-axis">
          {buckets.map((b, i) => (
            <span key={b.from}>{(buckets.length - 1 - i) % every === 0 ? label(new Date(b.from)) : ''}</span>
          ))}
        </div>
      </div>
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
        <span class="legend ok">Succeeded (up)</span>: {plural(succeeded, 'sign-in')}; <span class="legend failed">failed (down)</span>: {failed}. Per {unit}, oldest
        first.
      </figcaption>
    </figure>
  );
}
