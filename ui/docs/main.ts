// The API reference page served at /docs by both the headless server and the app's local
// API. Everything it needs is bundled at build time from npm (swagger-ui-dist): it works
// with no network, and its Content-Security-Policy forbids any other origin anyway.
import 'swagger-ui-dist/swagger-ui.css';
import './docs.css';

import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-es-bundle.js';

import { petstoreExtensions, servedHere } from './extensions';

async function show(root: HTMLElement) {
  const response = await fetch('/openapi.json');
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  const spec = servedHere(await response.json(), window.location.origin);
  root.textContent = '';
  SwaggerUIBundle({
    spec,
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [petstoreExtensions],
    layout: 'BaseLayout',
    deepLinking: true,
    displayOperationId: true,
    docExpansion: 'list',
    // Never send the document to swagger.io's online validator.
    validatorUrl: null,
    // The key typed into "Authorize" lives only as long as the page.
    persistAuthorization: false,
    onComplete: () => root.removeAttribute('aria-busy'),
  });
}

const root = document.getElementById('reference')!;
show(root).catch((error: Error) => {
  root.removeAttribute('aria-busy');
  root.setAttribute('role', 'alert');
  root.textContent = `The API reference could not be loaded: ${error.message}`;
});
