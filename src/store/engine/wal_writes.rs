//! One write per commit into the WAL, instead of two per page.
//!
//! SQLite appends a commit to the WAL frame by frame, each frame as two `pwrite`s (its
//! 24-byte header, then the page), and syncs once at the end. A busy group of orders is
//! about a hundred frames, so the writer thread spent a third of its time in the kernel's
//! write path, half of it on partial pages (the frames are not page-aligned). This VFS is
//! SQLite's own (`unix`) with one difference: a WAL file gathers writes that continue one
//! another in memory and hands them to the file as one write before anything that must
//! see them: a sync, a read, a size, a truncation, a file control or the close.
//!
//! Nothing changes for durability. SQLite promises nothing about a write before its sync,
//! and syncs a commit's frames (`synchronous = FULL`) before it publishes them to other
//! connections in the WAL index; by then they are in the file. A crash before the sync
//! loses the same as before: an unsynced tail that the frames' checksums reject.
//!
//! Linux only: there the gain was measured, and the `unix` VFS's methods are known to work
//! on a copy of its `sqlite3_vfs` (SQLite's own `unix-excl` and `unix-none` are such
//! copies). Elsewhere connections use the default VFS.

use std::ffi::{CStr, c_int, c_void};
use std::mem::{align_of, size_of};
use std::ptr;
use std::sync::OnceLock;

use rusqlite::ffi;

/// The name connections open the database with.
pub(super) const VFS_NAME: &CStr = c"petstore-unix";

/// At most this much is held before it is written anyway (a large transaction, a seed).
const MAX_HELD: usize = 4 << 20;

/// The most the `unix` VFS writes in one call: it keeps only the low 17 bits of a write's
/// length (`seekAndWriteFd`), since SQLite itself never writes more than a page and a frame
/// header. A busy commit of a hundred frames is four such writes.
const MAX_WRITE: usize = 0x1ffff & !0xfff;

/// Registers the VFS once per process and answers its name, or `None` when SQLite has no
/// default VFS to wrap (then connections use whatever SQLite has).
pub(super) fn vfs() -> Option<&'static CStr> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    REGISTERED.get_or_init(|| unsafe { register() }).then_some(VFS_NAME)
}

/// The wrapped VFS (SQLite's default), set once before ours is registered.
static ROOT: OnceLock<Root> = OnceLock::new();

struct Root(*mut ffi::sqlite3_vfs);
// SAFETY: a registered VFS is immutable and shared by every connection on every thread.
unsafe impl Send for Root {}
unsafe impl Sync for Root {}

/// Where the wrapped file starts inside our file object.
const REAL_AT: usize = size_of::<WalFile>().next_multiple_of(16);

/// A WAL file: SQLite's file object first (its methods are ours), then what is held, and
/// the wrapped VFS's own file object after it in the same allocation.
#[repr(C)]
struct WalFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// Writes not yet handed to `real`, which continue one another from `start`.
    held: Vec<u8>,
    start: i64,
}

unsafe fn register() -> bool {
    unsafe {
        let root = ffi::sqlite3_vfs_find(ptr::null());
        if root.is_null() || ROOT.set(Root(root)).is_err() {
            return false;
        }
        let Ok(real_size) = usize::try_from((*root).szOsFile) else { return false };
        let Ok(size) = c_int::try_from(REAL_AT + real_size) else { return false };
        // Every other method is the root's own: they use nothing of the `sqlite3_vfs` they
        // are given but `mxPathname` and `pAppData`, which the copy keeps.
        let mut vfs = *root;
        vfs.szOsFile = size;
        vfs.pNext = ptr::null_mut();
        vfs.zName = VFS_NAME.as_ptr();
        vfs.xOpen = Some(open);
        debug_assert!(align_of::<WalFile>() <= 16);
        ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0) == ffi::SQLITE_OK
    }
}

fn root() -> *mut ffi::sqlite3_vfs {
    ROOT.get().map_or(ptr::null_mut(), |r| r.0)
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    unsafe {
        let root = root();
        let Some(root_open) = (*root).xOpen else { return ffi::SQLITE_ERROR };
        if flags & ffi::SQLITE_OPEN_WAL == 0 {
            // Any other file is the root's own, at the start of the object.
            return root_open(root, name, file, flags, out_flags);
        }
        let real = file.cast::<u8>().add(REAL_AT).cast::<ffi::sqlite3_file>();
        let rc = root_open(root, name, real, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            // SQLite closes a file only if its methods are set.
            (*file).pMethods = ptr::null();
            return rc;
        }
        file.cast::<WalFile>().write(WalFile {
            base: ffi::sqlite3_file { pMethods: &WAL_METHODS },
            real,
            held: Vec::new(),
            start: 0,
        });
        ffi::SQLITE_OK
    }
}

static WAL_METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

/// Our part of `file`, and the wrapped file's methods.
unsafe fn parts<'a>(file: *mut ffi::sqlite3_file) -> (&'a mut WalFile, &'a ffi::sqlite3_io_methods) {
    unsafe {
        let wal = &mut *file.cast::<WalFile>();
        let methods = &*(*wal.real).pMethods;
        (wal, methods)
    }
}

/// Calls the wrapped file's `method`, or answers `missing` if it has none.
macro_rules! forward {
    ($methods:expr, $method:ident, $missing:expr, $($arg:expr),*) => {
        match $methods.$method {
            Some(f) => f($($arg),*),
            None => $missing,
        }
    };
}

/// A WAL file's method done by the wrapped file: `wrapped!(file, xMethod, missing, args)`
/// calls the wrapped file's `xMethod` with `args`, or answers `missing` if it has none;
/// `after_flush` first hands it what is held, and answers the failure if that fails.
macro_rules! wrapped {
    (after_flush $file:expr, $method:ident, $missing:expr $(, $arg:expr)*) => {{
        let (wal, methods) = parts($file);
        match wal.flush() {
            ffi::SQLITE_OK => forward!(methods, $method, $missing, wal.real $(, $arg)*),
            rc => rc,
        }
    }};
    ($file:expr, $method:ident, $missing:expr $(, $arg:expr)*) => {{
        let (wal, methods) = parts($file);
        forward!(methods, $method, $missing, wal.real $(, $arg)*)
    }};
}

impl WalFile {
    /// Hands what is held to the file, in as few writes as the `unix` VFS takes.
    unsafe fn flush(&mut self) -> c_int {
        let mut rc = ffi::SQLITE_OK;
        let mut offset = self.start;
        for piece in self.held.chunks(MAX_WRITE) {
            rc = unsafe {
                let methods = &*(*self.real).pMethods;
                // `piece.len()` <= MAX_WRITE fits a c_int.
                forward!(
                    methods,
                    xWrite,
                    ffi::SQLITE_IOERR_WRITE,
                    self.real,
                    piece.as_ptr().cast(),
                    piece.len() as c_int,
                    offset
                )
            };
            if rc != ffi::SQLITE_OK {
                break;
            }
            offset += piece.len() as i64;
        }
        // Written or not, it is not held any more: a failed write fails the transaction,
        // which SQLite then rolls back.
        self.held.clear();
        rc
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe {
        let (wal, methods) = parts(file);
        let flushed = wal.flush();
        let closed = forward!(methods, xClose, ffi::SQLITE_OK, wal.real);
        ptr::drop_in_place(file.cast::<WalFile>());
        if flushed != ffi::SQLITE_OK { flushed } else { closed }
    }
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    unsafe {
        let (wal, methods) = parts(file);
        let Ok(len) = usize::try_from(amount) else { return ffi::SQLITE_IOERR_WRITE };
        let follows = !wal.held.is_empty() && offset == wal.start + wal.held.len() as i64;
        if !(follows && wal.held.len() + len <= MAX_HELD) {
            let rc = wal.flush();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            if len > MAX_HELD {
                return forward!(methods, xWrite, ffi::SQLITE_IOERR_WRITE, wal.real, data, amount, offset);
            }
            wal.start = offset;
        }
        wal.held.extend_from_slice(std::slice::from_raw_parts(data.cast::<u8>(), len));
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    data: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    unsafe { wrapped!(after_flush file, xRead, ffi::SQLITE_IOERR_READ, data, amount, offset) }
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    unsafe { wrapped!(after_flush file, xTruncate, ffi::SQLITE_IOERR_TRUNCATE, size) }
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    unsafe { wrapped!(after_flush file, xSync, ffi::SQLITE_IOERR_FSYNC, flags) }
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    unsafe { wrapped!(after_flush file, xFileSize, ffi::SQLITE_IOERR_FSTAT, size) }
}

unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    unsafe { wrapped!(after_flush file, xFileControl, ffi::SQLITE_NOTFOUND, op, arg) }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let no_map = || {
        unsafe { *out = ptr::null_mut() };
        ffi::SQLITE_OK
    };
    unsafe { wrapped!(after_flush file, xFetch, no_map(), offset, amount, out) }
}

// What follows needs nothing of what is held.

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, offset: i64, page: *mut c_void) -> c_int {
    unsafe { wrapped!(file, xUnfetch, ffi::SQLITE_OK, offset, page) }
}

unsafe extern "C" fn lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    unsafe { wrapped!(file, xLock, ffi::SQLITE_OK, level) }
}

unsafe extern "C" fn unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    unsafe { wrapped!(file, xUnlock, ffi::SQLITE_OK, level) }
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let unreserved = || {
        unsafe { *out = 0 };
        ffi::SQLITE_OK
    };
    unsafe { wrapped!(file, xCheckReservedLock, unreserved(), out) }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe { wrapped!(file, xSectorSize, 4096) }
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    unsafe { wrapped!(file, xDeviceCharacteristics, 0) }
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    page_size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    unsafe { wrapped!(file, xShmMap, ffi::SQLITE_IOERR_SHMMAP, page, page_size, extend, out) }
}

unsafe extern "C" fn shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    unsafe { wrapped!(file, xShmLock, ffi::SQLITE_IOERR_SHMLOCK, offset, n, flags) }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    unsafe { wrapped!(file, xShmBarrier, ()) }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    unsafe { wrapped!(file, xShmUnmap, ffi::SQLITE_OK, delete) }
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, OpenFlags, params};

    use super::*;

    fn blob(row: i64) -> Vec<u8> {
        vec![(row % 251) as u8; 3000]
    }

    /// Every row of `round`, as another connection (SQLite's default VFS) reads them.
    fn rows_seen(conn: &Connection, round: i64) -> Vec<(i64, Vec<u8>)> {
        let mut stmt = conn.prepare("SELECT i, b FROM t WHERE round = ?1 ORDER BY i").unwrap();
        stmt.query_map([round], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn every_commit_is_in_the_file_for_other_connections_when_it_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let writer =
            Connection::open_with_flags_and_vfs(&path, OpenFlags::default(), vfs().unwrap()).unwrap();
        // A small cache makes the large transaction spill pages into the WAL before its
        // commit, and read them back from there.
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 0;
                 PRAGMA cache_size = 20; CREATE TABLE t (round INTEGER, i INTEGER, b BLOB)",
            )
            .unwrap();
        let other = Connection::open(&path).unwrap();
        // One frame; more than one write of the wrapped VFS; more than is ever held.
        for (round, rows) in [(1, 1), (2, 100), (3, 3000)] {
            writer.execute_batch("BEGIN").unwrap();
            for i in 0..rows {
                writer.execute("INSERT INTO t VALUES (?1, ?2, ?3)", params![round, i, blob(i)]).unwrap();
            }
            let own: i64 =
                writer.query_row("SELECT count(*) FROM t WHERE round = ?1", [round], |r| r.get(0)).unwrap();
            assert_eq!(own, rows, "the writer reads back its own spilled pages");
            writer.execute_batch("COMMIT").unwrap();

            let expected: Vec<_> = (0..rows).map(|i| (i, blob(i))).collect();
            assert!(
                rows_seen(&other, round) == expected,
                "round {round}: another connection sees the commit whole"
            );
        }
        // And the files alone hold it all: a copy of the database and its WAL, opened cold.
        let copy = dir.path().join("copy.db");
        std::fs::copy(&path, &copy).unwrap();
        std::fs::copy(dir.path().join("w.db-wal"), dir.path().join("copy.db-wal")).unwrap();
        let cold = Connection::open(&copy).unwrap();
        assert_eq!(rows_seen(&cold, 3).len(), 3000);
        assert!(rows_seen(&cold, 2) == (0..100).map(|i| (i, blob(i))).collect::<Vec<_>>());
    }
}
