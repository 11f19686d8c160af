//! The limit of open files, which bounds the connections the server can hold: each one is
//! an open file, and so are the database's own.

/// Files kept for everything but client connections: the database (the writer, the
/// checkpointer and up to 8 readers, each with the database file, its WAL and the WAL's
/// shared memory: 30), a backup being written, the listener, the runtime's own, the
/// standard streams, and in the desktop app whatever its window holds open.
const RESERVED_FILES: u64 = 256;

/// The most connections kept open even where the system allows more files: each holds
/// buffers of some KB, and a shop has a handful of tills and scripts.
const MAX_CONNECTIONS: u64 = 10_000;

/// How many client connections may be open at once: what the limit of open files leaves
/// after [`RESERVED_FILES`], at most [`MAX_CONNECTIONS`].
pub(super) fn max_connections() -> usize {
    let connections = match raise_limit() {
        // Never less than half the files, for a limit so low that the reserve is most of it.
        Some(files) => files.saturating_sub(RESERVED_FILES).max(files / 2).min(MAX_CONNECTIONS),
        None => MAX_CONNECTIONS,
    };
    usize::try_from(connections).unwrap_or(usize::MAX)
}

/// Raises the soft limit of open files to the hard limit, once per process, and answers
/// the soft limit in force; `None` where there is none (Windows). Many systems still start
/// a process with a soft limit of 1,024 and a far higher hard one, which it may raise
/// itself; a limit it cannot raise is kept, and the connections are capped below it.
#[cfg(unix)]
fn raise_limit() -> Option<u64> {
    static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the one struct passed.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            let error = std::io::Error::last_os_error();
            tracing::warn!(%error, "cannot read the limit of open files");
            return None;
        }
        let was = limit.rlim_cur;
        // macOS refuses more than OPEN_MAX (10,240) when the hard limit is unlimited.
        for wanted in [limit.rlim_max, limit.rlim_max.min(10_240)] {
            let raised = libc::rlimit { rlim_cur: wanted, rlim_max: limit.rlim_max };
            // SAFETY: setrlimit reads the one struct passed.
            if wanted > limit.rlim_cur && unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                limit.rlim_cur = wanted;
                break;
            }
        }
        #[allow(clippy::unnecessary_cast, reason = "rlim_t is u32 on 32-bit Linux")]
        let (files, was) = (limit.rlim_cur as u64, was as u64);
        if files > was {
            tracing::info!(open_files = files, was, "raised the limit of open files to the hard limit");
        } else {
            tracing::info!(open_files = files, "the limit of open files");
        }
        Some(files)
    })
}

#[cfg(not(unix))]
fn raise_limit() -> Option<u64> {
    None
}
