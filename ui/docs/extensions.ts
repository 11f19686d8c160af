// The OpenAPI extensions the Petstore document uses, shown by Swagger UI, which does not
// know them: `x-stability` (beta, experimental) and `x-deprecated-sunset` as badges beside
// the path, and `x-hideTryItPanel` by taking "Try it out" away from that operation.
// The pure functions below decide; the plugin at the bottom only renders their answers.

/** The marks an operation may carry, read from the document. */
export interface OperationMarks {
  deprecated?: unknown;
  stability?: unknown;
  sunset?: unknown;
  hideTryIt?: unknown;
}

export interface Badge {
  kind: 'beta' | 'experimental' | 'deprecated';
  label: string;
  title: string;
}

const STABILITY: Record<string, string> = {
  beta: 'Beta: complete, but its details may still change before it is declared stable.',
  experimental: 'Experimental: may change or be withdrawn without notice; do not build on it yet.',
};

export function badgesFor(marks: OperationMarks): Badge[] {
  const badges: Badge[] = [];
  if (typeof marks.stability === 'string' && marks.stability in STABILITY) {
    const kind = marks.stability as 'beta' | 'experimental';
    badges.push({ kind, label: kind, title: STABILITY[kind] });
  }
  if (marks.deprecated === true) {
    const sunset = typeof marks.sunset === 'string' ? marks.sunset : undefined;
    badges.push({
      kind: 'deprecated',
      label: sunset ? `deprecated · sunset ${sunset}` : 'deprecated',
      title: sunset
        ? `Deprecated: answers until ${sunset}, then 410 Gone. Use its successor instead.`
        : 'Deprecated: use its successor instead.',
    });
  }
  return badges;
}

export function tryItHidden(marks: OperationMarks): boolean {
  return marks.hideTryIt === true;
}

/** The document with `servers` pointing at the server that served this page, so "Try it
 * out" talks to it whatever address or port it listens on. */
export function servedHere<T extends object>(spec: T, origin: string): T & { servers: object[] } {
  return { ...spec, servers: [{ url: origin, description: 'This server' }] };
}

// Swagger UI keeps the document as Immutable.js maps: all we need from one is `get`.
interface ImmutableMap {
  get(key: string): unknown;
  getIn(path: string[]): unknown;
}

function marksOf(operation: ImmutableMap | undefined): OperationMarks {
  return {
    deprecated: operation?.get('deprecated'),
    stability: operation?.get('x-stability'),
    sunset: operation?.get('x-deprecated-sunset'),
    hideTryIt: operation?.get('x-hideTryItPanel'),
  };
}

function operationIn(system: System, path: string, method: string): ImmutableMap | undefined {
  return system.specSelectors.specJson().getIn(['paths', path, method]) as ImmutableMap | undefined;
}

interface ReactLike {
  createElement(type: unknown, props: object | null, ...children: unknown[]): unknown;
  Fragment: unknown;
}

interface System {
  React: ReactLike;
  specSelectors: { specJson(): ImmutableMap };
}

/** The Swagger UI plugin. */
export function petstoreExtensions(system: System) {
  const h = system.React.createElement;
  return {
    wrapComponents: {
      OperationSummaryPath:
        (Original: unknown) =>
        (props: { operationProps: ImmutableMap }) => {
          // `operationProps.op` is only filled once the operation is expanded; the
          // document itself always has the marks.
          const path = props.operationProps.get('path') as string;
          const method = props.operationProps.get('method') as string;
          const badges = badgesFor(marksOf(operationIn(system, path, method)));
          return h(
            system.React.Fragment,
            null,
            h(Original, props),
            ...badges.map((b) =>
              h('span', { key: b.kind, className: `petstore-badge petstore-badge--${b.kind}`, title: b.title }, b.label),
            ),
          );
        },
    },
    statePlugins: {
      spec: {
        wrapSelectors: {
          allowTryItOutFor:
            (original: (path: string, method: string) => boolean, sys: System) =>
            (_state: unknown, path: string, method: string) => {
              return !tryItHidden(marksOf(operationIn(sys, path, method))) && original(path, method);
            },
        },
      },
    },
  };
}
