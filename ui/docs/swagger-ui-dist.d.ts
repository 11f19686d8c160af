// swagger-ui-dist ships no types; this is the little of its API the page uses.
declare module 'swagger-ui-dist/swagger-ui-es-bundle.js' {
  type Plugin = (system: unknown) => object;
  interface SwaggerUIBundle {
    (options: Record<string, unknown>): unknown;
    presets: { apis: Plugin };
  }
  const SwaggerUIBundle: SwaggerUIBundle;
  export default SwaggerUIBundle;
}
