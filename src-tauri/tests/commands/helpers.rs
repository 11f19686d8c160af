use petstore_desktop::{Launch, run_app};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};
use tempfile::TempDir;

#[cfg(windows)]
const LOCAL_ORIGIN: &str = "http://tauri.localhost";
#[cfg(not(windows))]
const LOCAL_ORIGIN: &str = "tauri://localhost";

pub struct TestApp {
    pub app: App<MockRuntime>,
    webview: WebviewWindow<MockRuntime>,
    pub dir: TempDir,
}

/// The app on the mock runtime with its own data directory; its local API takes a free port.
pub fn app() -> TestApp {
    app_in(tempfile::tempdir().unwrap())
}

/// The app on an existing data directory, as after a restart.
pub fn app_in(dir: TempDir) -> TestApp {
    app_with(
        Launch { data_dir: Some(dir.path().to_path_buf()), local_api_port: Some(0), ..Launch::default() },
        dir,
    )
}

/// The app launched as `launch` says; `dir` is kept alive with it.
pub fn app_with(launch: Launch, dir: TempDir) -> TestApp {
    let mut app = run_app(mock_builder().manage(launch)).build(context()).unwrap();
    // Setup (opening the store, starting the local API) runs on the first event-loop
    // iteration; on the mock runtime this call does just that and returns.
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    TestApp { app, webview, dir }
}

/// Tauri's mock context, with the plugin configuration of tauri.conf.json (the updater's).
fn context() -> tauri::Context<MockRuntime> {
    let mut context = mock_context(noop_assets());
    let config: Value = serde_json::from_str(include_str!("../../tauri.conf.json")).unwrap();
    for (name, plugin) in config["plugins"].as_object().unwrap() {
        context.config_mut().plugins.0.insert(name.clone(), plugin.clone());
    }
    context
}

impl TestApp {
    /// Calls a command as the UI does; `Err` holds the error object it rejects with.
    pub fn call<T: DeserializeOwned>(&self, cmd: &str, args: Value) -> Result<T, Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: tauri::ipc::CallbackFn(0),
            error: tauri::ipc::CallbackFn(1),
            // The window's own origin: commands from anywhere else would need a capability.
            url: LOCAL_ORIGIN.parse().unwrap(),
            body: tauri::ipc::InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(&self.webview, request).map(|body| body.deserialize::<T>().unwrap())
    }

    /// A command that must succeed.
    pub fn ok(&self, cmd: &str, args: Value) -> Value {
        self.call(cmd, args).unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }

    /// A command that must fail; returns its error object.
    pub fn fails(&self, cmd: &str, args: Value) -> Value {
        match self.call::<Value>(cmd, args) {
            Ok(v) => panic!("{cmd} should have failed, answered {v}"),
            Err(e) => e,
        }
    }
}

/// A pet-query argument with nothing but `overrides` set.
pub fn pet_query(overrides: Value) -> Value {
    let mut query = serde_json::json!({
        "statuses": [], "categoryId": null, "q": null, "ids": [], "sort": null, "limit": null, "offset": null
    });
    for (k, v) in overrides.as_object().unwrap() {
        query[k] = v.clone();
    }
    serde_json::json!({ "query": query })
}

pub const REMOTE_KEY: &str = "remote-key-0123456789abcdefghij";

/// A real Petstore server in this process, taking `REMOTE_KEY`; it lives as long as the test.
pub fn remote_server() -> (std::net::SocketAddr, TempDir) {
    use petstore::api::KeyRing;
    use petstore::server::{Application, ServerConfig};
    let dir = tempfile::tempdir().unwrap();
    let store = petstore::Store::open(dir.path().join("remote.db")).unwrap();
    let config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), KeyRing::from_secrets([REMOTE_KEY]));
    let server = tauri::async_runtime::block_on(Application::bind(
        petstore::Served::all_of(std::sync::Arc::new(store)),
        config,
    ))
    .unwrap();
    let addr = server.local_addr();
    tauri::async_runtime::spawn(server.run_until(std::future::pending()));
    (addr, dir)
}
