//! The key check (`access.rs`) in front of the routes that need a key: a layer for axum's
//! `route_layer`, so that an unknown path stays a 404 and the key is checked before any
//! parameter is parsed.
//!
//! A hand-written service rather than `from_fn`, which boxed and cloned the routes below it
//! for every request: an operator's key (the desktop app's, an integration's) is checked in
//! memory and the route called at once; only a named key waits for the database.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use tower::{Layer, Service};

use super::access::{self, FirstLook};
use super::state::AppState;
use crate::api_key::KeyIdentity;

#[derive(Clone)]
pub struct RequireKey(pub AppState);

/// What the server that carries a request wants to hear once its key has passed: it keeps
/// room for such requests and closes the others' connections first (`server/connections.rs`).
pub trait KeyWatch: Send + Sync {
    fn key_passed(&self);
}

/// The [`KeyWatch`] of a request, as an extension the server puts on it.
#[derive(Clone)]
pub struct KeyPassed(pub Arc<dyn KeyWatch>);

fn tell_key_passed(req: &Request) {
    if let Some(KeyPassed(watch)) = req.extensions().get::<KeyPassed>() {
        watch.key_passed();
    }
}

impl<S> Layer<S> for RequireKey {
    type Service = KeyCheck<S>;

    fn layer(&self, inner: S) -> KeyCheck<S> {
        KeyCheck { inner, state: self.0.clone() }
    }
}

#[derive(Clone)]
pub struct KeyCheck<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for KeyCheck<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = KeyFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let presented = match access::first_look(&req, &self.state.keys) {
            FirstLook::Operator(at) => {
                tell_key_passed(&req);
                // Who sent it, for what it keeps (its idempotency keys, `idempotency.rs`).
                req.extensions_mut().insert(KeyIdentity::Operator(at));
                return KeyFuture::Pass { future: self.inner.call(req) };
            }
            FirstLook::Named(presented) => presented,
            FirstLook::Refused(refusal) => {
                let response = access::refuse(&self.state.failures, self.state.clock.now(), &req, refusal);
                return KeyFuture::Ready { response: Some(response) };
            }
        };
        // The service that was made ready answers the request; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let state = self.state.clone();
        KeyFuture::LookUp {
            future: Box::pin(async move {
                match access::check_named(
                    state.named_keys.as_ref(),
                    presented,
                    req.method(),
                    req.uri().path(),
                    req.headers(),
                )
                .await
                {
                    Ok((identity, named)) => {
                        tell_key_passed(&req);
                        req.extensions_mut().insert(identity);
                        req.extensions_mut().insert(named);
                        inner.call(req).await.unwrap_or_else(|never| match never {})
                    }
                    Err(refusal) => access::refuse(&state.failures, state.clock.now(), &req, refusal),
                }
            }),
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of [`KeyCheck`]: the route's own future when the key was checked in
    /// memory, a refusal, or the database lookup of a named key followed by the route.
    #[project = KeyFutureProj]
    pub enum KeyFuture<F> {
        Pass { #[pin] future: F },
        Ready { response: Option<Response> },
        LookUp { future: Pin<Box<dyn Future<Output = Response> + Send>> },
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for KeyFuture<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            KeyFutureProj::Pass { future } => future.poll(cx),
            KeyFutureProj::Ready { response } => {
                Poll::Ready(Ok(response.take().expect("a KeyFuture polled after it finished")))
            }
            KeyFutureProj::LookUp { future } => future.as_mut().poll(cx).map(Ok),
        }
    }
}
