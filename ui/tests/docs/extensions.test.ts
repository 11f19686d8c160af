import { badgesFor, servedHere, tryItHidden } from '../../docs/extensions';

describe('the API reference badges', () => {
  it('marks beta and experimental operations, and only those stabilities', () => {
    expect(badgesFor({ stability: 'beta' }).map((b) => [b.kind, b.label])).toEqual([['beta', 'beta']]);
    expect(badgesFor({ stability: 'experimental' })[0].kind).toBe('experimental');
    expect(badgesFor({ stability: 'stable' })).toEqual([]);
    expect(badgesFor({ stability: 42 })).toEqual([]);
    expect(badgesFor({})).toEqual([]);
  });

  it('gives a deprecated operation its sunset date', () => {
    const [badge] = badgesFor({ deprecated: true, sunset: '2027-06-30' });
    expect(badge.label).toBe('deprecated · sunset 2027-06-30');
    expect(badge.title).toContain('410 Gone');
    expect(badgesFor({ deprecated: true })[0].label).toBe('deprecated');
    expect(badgesFor({ deprecated: false, sunset: '2027-06-30' })).toEqual([]);
  });

  it('puts the stability before the deprecation when both are there', () => {
    const kinds = badgesFor({ stability: 'beta', deprecated: true }).map((b) => b.kind);
    expect(kinds).toEqual(['beta', 'deprecated']);
  });
});

describe('try it out', () => {
  it('is hidden only where x-hideTryItPanel is true', () => {
    expect(tryItHidden({ hideTryIt: true })).toBe(true);
    expect(tryItHidden({ hideTryIt: 'true' })).toBe(false);
    expect(tryItHidden({})).toBe(false);
  });

  it('talks to the server that served the page', () => {
    const spec = { openapi: '3.0.3', servers: [{ url: 'http://127.0.0.1:8787' }] };
    const here = servedHere(spec, 'http://127.0.0.1:9100');
    expect(here.servers).toEqual([{ url: 'http://127.0.0.1:9100', description: 'This server' }]);
    expect(here.openapi).toBe('3.0.3');
    expect(spec.servers[0].url).toBe('http://127.0.0.1:8787');
  });
});
