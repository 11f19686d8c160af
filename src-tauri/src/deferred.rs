//! A value made on a thread of its own while start-up goes on, and waited for only where it
//! is first needed.

use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

pub struct Deferred<T> {
    value: OnceLock<T>,
    making: Mutex<Option<JoinHandle<T>>>,
}

impl<T: Send + 'static> Deferred<T> {
    /// Starts making the value on a new thread named `name`.
    pub fn start(name: &str, make: impl FnOnce() -> T + Send + 'static) -> std::io::Result<Self> {
        let making = std::thread::Builder::new().name(name.into()).spawn(make)?;
        Ok(Self { value: OnceLock::new(), making: Mutex::new(Some(making)) })
    }

    /// The value, waiting for it if it is still being made. A panic while making it is
    /// raised again here, in whoever asks first.
    pub fn get(&self) -> &T {
        self.value.get_or_init(|| {
            let making = self.making.lock().unwrap_or_else(|p| p.into_inner()).take();
            // `get_or_init` runs this once; a second run would mean it panicked before.
            let making = making.expect("the deferred value was being made when it panicked");
            making.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }
}

impl<T> Drop for Deferred<T> {
    /// Waits for a value still being made, so that its maker never outlives its owner
    /// half done (the keyring probe writes an entry it then removes).
    fn drop(&mut self) {
        if let Some(making) = self.making.get_mut().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = making.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    #[test]
    fn the_value_is_made_once_beside_the_caller_and_waited_for_at_first_use() {
        let (release, held) = mpsc::channel::<()>();
        let deferred = Deferred::start("test", move || {
            held.recv().unwrap();
            std::thread::current().name().map(str::to_owned)
        })
        .unwrap();
        // The maker is still held, yet starting it did not wait for it.
        release.send(()).unwrap();
        assert_eq!(deferred.get().as_deref(), Some("test"), "made on its own thread");
        assert!(std::ptr::eq(deferred.get(), deferred.get()), "made once");
    }

    #[test]
    fn a_panic_while_making_reaches_the_first_caller() {
        let deferred: Deferred<u8> = Deferred::start("test", || panic!("no keyring today")).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *deferred.get()));
        assert!(caught.is_err());
    }
}
