//! A server that lies, for the mirror's tests: an axum proxy on loopback in front of a
//! real Petstore server that passes every request on and can twist an answer on its way
//! back (a header, a field of the JSON), make up one instead, or play unavailable. The
//! real server never misbehaves; a till must still survive one that does.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, Response, StatusCode, Uri, header};
use futures_util::stream;

/// What the liar does with an answer: the request's method and URI, the answer's headers
/// and body, changed in place.
pub(super) type Twist = Box<dyn Fn(&Method, &Uri, &mut HeaderMap, &mut Vec<u8>) + Send>;
/// An answer made up for a request, instead of asking the server.
pub(super) type Lie = Box<dyn Fn(&Method, &Uri) -> Option<Response<Body>> + Send>;

#[derive(Default)]
struct Behaviour {
    /// Answer every request `503 busy`, with this `Retry-After` if any.
    unavailable: Option<Option<u64>>,
    lie: Option<Lie>,
    twist: Option<Twist>,
}

pub(super) struct Liar {
    pub addr: SocketAddr,
    behaviour: Arc<Mutex<Behaviour>>,
    /// Every request it got: method and path with query.
    seen: Arc<Mutex<Vec<(Method, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Liar {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Liar {
    /// A liar in front of the server at `upstream` (honest until told otherwise).
    pub async fn start(upstream: SocketAddr) -> Self {
        let behaviour = Arc::new(Mutex::new(Behaviour::default()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let http = reqwest::Client::new();
        let (b, s) = (behaviour.clone(), seen.clone());
        let app = axum::Router::new().fallback(move |request: Request<Body>| {
            let (behaviour, seen, http) = (b.clone(), s.clone(), http.clone());
            async move { answer(request, upstream, &behaviour, &seen, &http).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, behaviour, seen, task }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn unavailable(&self, retry_after: Option<u64>) {
        self.behaviour.lock().unwrap().unavailable = Some(retry_after);
    }

    pub fn available(&self) {
        self.behaviour.lock().unwrap().unavailable = None;
    }

    pub fn twist(&self, twist: Twist) {
        self.behaviour.lock().unwrap().twist = Some(twist);
    }

    pub fn lie(&self, lie: Lie) {
        self.behaviour.lock().unwrap().lie = Some(lie);
    }

    /// How many requests it got that `matches` (method, path with query).
    pub fn count(&self, matches: impl Fn(&Method, &str) -> bool) -> usize {
        self.seen.lock().unwrap().iter().filter(|(m, p)| matches(m, p)).count()
    }
}

async fn answer(
    request: Request<Body>,
    upstream: SocketAddr,
    behaviour: &Mutex<Behaviour>,
    seen: &Mutex<Vec<(Method, String)>>,
    http: &reqwest::Client,
) -> Response<Body> {
    let (head, body) = request.into_parts();
    let path = head.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    seen.lock().unwrap().push((head.method.clone(), path.clone()));
    {
        let behaviour = behaviour.lock().unwrap();
        if let Some(retry_after) = behaviour.unavailable {
            let mut response = Response::new(Body::from(r#"{"code":"busy","message":"the liar is busy"}"#));
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            response.headers_mut().insert(header::CONTENT_TYPE, "application/json".parse().unwrap());
            if let Some(secs) = retry_after {
                response.headers_mut().insert(header::RETRY_AFTER, secs.into());
            }
            return response;
        }
        if let Some(made_up) = behaviour.lie.as_ref().and_then(|lie| lie(&head.method, &head.uri)) {
            return made_up;
        }
    }
    let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let mut forward = http.request(head.method.clone(), format!("http://{upstream}{path}")).body(body);
    for (name, value) in &head.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            forward = forward.header(name, value);
        }
    }
    let Ok(upstream) = forward.send().await else {
        return Response::builder().status(StatusCode::BAD_GATEWAY).body(Body::empty()).unwrap();
    };
    let mut response = Response::builder().status(upstream.status());
    let mut headers = upstream.headers().clone();
    for hop in [header::CONTENT_LENGTH, header::TRANSFER_ENCODING, header::CONNECTION] {
        headers.remove(hop);
    }
    if head.uri.path() == "/events" {
        // Passed on as it comes: the stream has no end to wait for.
        *response.headers_mut().unwrap() = headers;
        let chunks = stream::unfold(upstream, |mut upstream| async move {
            match upstream.chunk().await {
                Ok(Some(chunk)) => Some((Ok::<_, reqwest::Error>(chunk), upstream)),
                Ok(None) => None,
                Err(e) => Some((Err(e), upstream)),
            }
        });
        return response.body(Body::from_stream(chunks)).unwrap();
    }
    let mut body = upstream.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
    if let Some(twist) = &behaviour.lock().unwrap().twist {
        twist(&head.method, &head.uri, &mut headers, &mut body);
    }
    *response.headers_mut().unwrap() = headers;
    response.body(Body::from(Bytes::from(body))).unwrap()
}
