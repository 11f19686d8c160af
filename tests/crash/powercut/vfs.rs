//! A power cut, simulated under SQLite: a VFS for tests only (it lives in this test crate
//! and never in a shipped binary) that wraps SQLite's own `unix` VFS, remembers what each
//! file was written since its last sync, and, at the cut, puts the files in a state a disk
//! could be in after losing power, then kills the process at once. SQLite's own crash test
//! (`src/test6.c`) is the model.
//!
//! SIGKILL alone keeps the kernel's page cache: every write a killed process made is still
//! there, synced or not, so a crash test built on it cannot tell a sync that does nothing
//! from a real one, nor see writes reach the disk out of order or half a sector written.
//! Here they can.
//!
//! # The device model
//!
//! - What a file held at its last sync is durable, whoever synced it: an fsync makes the
//!   whole file durable, whichever descriptor or process asked. Syncs in this process are
//!   seen here; the other process of the rounds (`keys create`) installs this VFS as a
//!   *witness* ([`install_witness`]), which does its I/O unchanged but appends a line to a
//!   shared log before each sync it starts, so the cut knows which of this process's
//!   writes another process's sync may have made durable (every write made before that
//!   sync began: its checkpoint syncs pages this process copied into the database file,
//!   and its commit syncs the WAL), and the length the file had then. Everything the
//!   other process wrote is durable too: its writes are not modelled.
//! - Each write since the last sync may or may not have reached the disk, per 4096-byte
//!   aligned sector and independently of every other sector (the disk and the page cache
//!   write back in any order): a sector holds its content after all of the writes to it
//!   since the sync, after none of them, or after the first few; or it is torn, each of
//!   its 512-byte blocks from one of two of those states; or some of it is garbage.
//! - Tears and garbage stay inside the bytes written since the sync. The `unix` VFS reports
//!   `SQLITE_IOCAP_POWERSAFE_OVERWRITE`, which tells SQLite that writing some bytes never
//!   damages other bytes of the same sector at a power loss, and SQLite relies on it (it
//!   does not pad the WAL to sectors, and 2 KB pages share 4 KB sectors). A device that
//!   broke that promise is outside this model, as it is outside SQLite's.
//! - A file that grew since its last sync may come back at any length it had since (the
//!   end of any write after the sync), the bytes never written reading as zeros.
//! - Creating, deleting and truncating files are durable at once (journalled metadata).
//! - The `-shm` file is not a disk file here: it is a memory map that SQLite rebuilds from
//!   the WAL on the first open after a crash (the `unix` VFS truncates it when it finds no
//!   other connection), so it is left alone.
//! - A byte this process wrote that no longer holds what it wrote was written since by
//!   another process, which may have synced it: a sector with such bytes is left as it is.
//!
//! # Using it
//!
//! [`install`] registers it as the process's default VFS before any connection opens, so
//! `petstore::Store::open` goes through it with no hook in the production code (a VFS
//! layered on the default would sit on top of this one).
//! The other process calls [`install_witness`] instead, with the same log of syncs.
//! [`cut`] cuts the power now; [`cut_at_sync`] arms a cut at the Nth sync from then on,
//! just before that sync takes effect. Every I/O method holds a process-wide gate shared
//! while it runs; the cut takes it exclusively and never gives it back, so no I/O is half
//! done when it looks at the files, and none starts again before the process is gone.

#![warn(clippy::undocumented_unsafe_blocks)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, OsStr, c_char, c_int, c_void};
use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock, PoisonError, RwLock, RwLockReadGuard};

use rusqlite::ffi;

/// The VFS's name (it is also the default, so nobody needs to name it).
pub const NAME: &CStr = c"powercut";

/// The unit a disk writes whole or not at all (when it does not tear it), and the size the
/// `unix` VFS reports as `xSectorSize`.
const SECTOR: u64 = 4096;
/// The unit a torn sector is made of (the old 512-byte sector).
const BLOCK: usize = 512;

/// SQLite's `unix` VFS, which does the real I/O.
struct Unix(*mut ffi::sqlite3_vfs);
// SAFETY: a registered VFS is never changed or freed, and SQLite calls its methods from
// any thread; the pointer is only read.
unsafe impl Send for Unix {}
// SAFETY: as for Send: shared read-only.
unsafe impl Sync for Unix {}

static UNIX: OnceLock<Unix> = OnceLock::new();

/// What this process is: the one whose power is cut, or the other one beside it.
enum Role {
    Cut {
        seed: u64,
        /// Where the cut writes what it did, for the parent to read after the process died.
        report: PathBuf,
        /// The other process's log of syncs, open to read (its length marks each write).
        syncs: std::fs::File,
    },
    /// Appends `<file's length> <path>` to the log of syncs before each sync it starts.
    Witness { syncs: std::fs::File },
}

static ROLE: OnceLock<Role> = OnceLock::new();

/// Held shared by every I/O method while it runs, exclusively by the cut.
static GATE: RwLock<()> = RwLock::new(());

/// What each file was written since its last sync, by path: every handle of a file in
/// this process shares one record, since a sync by any of them makes the file durable.
static FILES: LazyLock<Mutex<HashMap<PathBuf, Arc<Mutex<Record>>>>> = LazyLock::new(Default::default);

/// Syncs left before the armed cut; 0 when none is armed.
static SYNCS_LEFT: AtomicU64 = AtomicU64::new(0);

/// Registers the VFS as the process's default, in the process whose power the rounds cut;
/// `syncs` is the log the other process's witness appends to. Call it once, before any
/// connection opens.
pub fn install(seed: u64, report: PathBuf, syncs: &Path) {
    let syncs =
        OpenOptions::new().create(true).append(true).read(true).open(syncs).expect("the log of syncs");
    register(Role::Cut { seed, report, syncs });
}

/// Registers the VFS as the process's default in the other process writing the database:
/// its I/O is done as it asks, and each sync is logged in `syncs` before it starts.
pub fn install_witness(syncs: &Path) {
    let syncs = OpenOptions::new().create(true).append(true).open(syncs).expect("the log of syncs");
    register(Role::Witness { syncs });
}

fn register(role: Role) {
    assert!(ROLE.set(role).is_ok(), "the power-cut VFS is installed once");
    // SAFETY: sqlite3_vfs_find takes a NUL-terminated name (or NULL) and initializes SQLite
    // itself if needed; it answers a registered VFS or NULL.
    let unix = unsafe { ffi::sqlite3_vfs_find(c"unix".as_ptr()) };
    assert!(!unix.is_null(), "SQLite has no unix VFS");
    assert!(UNIX.set(Unix(unix)).is_ok());
    // SAFETY: `unix` is a registered VFS, valid and unchanged for the life of the process.
    let mut vfs = unsafe { *unix };
    // The copy keeps `unix`'s other methods: they use nothing of the `sqlite3_vfs` they are
    // given (sqlite3.c marks the argument unused), so they work on this copy, and on any
    // copy of it a VFS layered on top makes.
    let real_size = usize::try_from(vfs.szOsFile).expect("a size");
    vfs.szOsFile = c_int::try_from(REAL_AT + real_size).expect("a small file object");
    vfs.pNext = ptr::null_mut();
    vfs.zName = NAME.as_ptr();
    vfs.xOpen = Some(open);
    vfs.xDelete = Some(delete);
    // SAFETY: the VFS is leaked, so it outlives every connection; `1` makes it the default.
    let rc = unsafe { ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 1) };
    assert_eq!(rc, ffi::SQLITE_OK, "registering the power-cut VFS");
}

fn unix() -> *mut ffi::sqlite3_vfs {
    UNIX.get().map_or(ptr::null_mut(), |u| u.0)
}

fn gate() -> RwLockReadGuard<'static, ()> {
    GATE.read().unwrap_or_else(PoisonError::into_inner)
}

/// Locks `mutex`; a panic elsewhere while it was held leaves nothing half done here.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One write since the file's last sync: what it wrote, and what those bytes held before
/// (zeros past the end of the file).
struct Write {
    seq: u64,
    /// The length of the other process's log of syncs just after this write: a sync it
    /// logged at this offset or later began after this write, and made it durable.
    mark: u64,
    offset: u64,
    old: Vec<u8>,
    new: Vec<u8>,
}

impl Write {
    fn end(&self) -> u64 {
        self.offset + self.new.len() as u64
    }
}

struct Record {
    path: PathBuf,
    /// The file's size at its last sync (or when this process first opened it).
    synced_size: u64,
    /// In the order they were made.
    writes: Vec<Write>,
    next_seq: u64,
}

impl Record {
    fn wrote(&mut self, mark: u64, offset: u64, old: Vec<u8>, new: Vec<u8>) {
        self.writes.push(Write { seq: self.next_seq, mark, offset, old, new });
        self.next_seq += 1;
    }

    /// A sync that began when `upto` writes had been made returned: those are durable.
    /// Writes made while it ran (another thread) may not be, so they stay.
    fn synced(&mut self, upto: u64, size: u64) {
        self.writes.retain(|w| w.seq >= upto);
        self.synced_size = size;
    }

    /// The file was cut to `size` (durable at once, like all metadata here): bytes past
    /// it are gone, written or not.
    fn truncated(&mut self, size: u64) {
        self.writes.retain(|w| w.offset < size);
        for w in &mut self.writes {
            let keep = (size - w.offset).min(w.new.len() as u64) as usize;
            w.new.truncate(keep);
            w.old.truncate(keep);
        }
        self.synced_size = self.synced_size.min(size);
    }
}

/// Our file object: SQLite's (its methods are ours), then our part, then the `unix` VFS's
/// own file object at `REAL_AT` in the same allocation.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    record: Arc<Mutex<Record>>,
}

const REAL_AT: usize = size_of::<File>().next_multiple_of(16);

/// The file's current size, or 0 if it cannot tell.
///
/// # Safety
/// `real` is an open file of the `unix` VFS.
unsafe fn size_of_real(real: *mut ffi::sqlite3_file) -> u64 {
    let mut size: i64 = 0;
    // SAFETY: the caller passes an open file, whose methods SQLite set when it opened it.
    let rc = unsafe {
        match (*(*real).pMethods).xFileSize {
            Some(file_size) => file_size(real, &mut size),
            None => ffi::SQLITE_ERROR,
        }
    };
    if rc == ffi::SQLITE_OK { u64::try_from(size).unwrap_or(0) } else { 0 }
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let unix = unix();
    // SAFETY: `unix` is the registered unix VFS; `file` is SQLite's allocation of szOsFile
    // bytes, REAL_AT + the unix VFS's own, so the unix file object fits at REAL_AT; `name`
    // is NULL or a NUL-terminated path that outlives the file.
    unsafe {
        let Some(unix_open) = (*unix).xOpen else { return ffi::SQLITE_ERROR };
        // Only the files a power cut matters for: the database, its WAL and its rollback
        // journal. Temporary files go away with the process anyway.
        let durable =
            flags & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_MAIN_JOURNAL | ffi::SQLITE_OPEN_WAL);
        if name.is_null() || durable == 0 {
            // The unix VFS's own object at the start: SQLite calls its methods directly.
            return unix_open(unix, name, file, flags, out_flags);
        }
        let _gate = gate();
        let real = file.cast::<u8>().add(REAL_AT).cast::<ffi::sqlite3_file>();
        let rc = unix_open(unix, name, real, flags, out_flags);
        if rc != ffi::SQLITE_OK {
            // SQLite closes a file only if its methods are set.
            (*file).pMethods = ptr::null();
            return rc;
        }
        let path = PathBuf::from(OsStr::from_bytes(CStr::from_ptr(name).to_bytes()));
        let record = lock(&FILES)
            .entry(path.clone())
            .or_insert_with(|| {
                // What is there when this process first opens it is durable: it was there
                // before (a cut before this process's start is over).
                Arc::new(Mutex::new(Record {
                    path,
                    synced_size: size_of_real(real),
                    writes: Vec::new(),
                    next_seq: 0,
                }))
            })
            .clone();
        file.cast::<File>().write(File { base: ffi::sqlite3_file { pMethods: &METHODS }, real, record });
        ffi::SQLITE_OK
    }
}

unsafe extern "C" fn delete(_vfs: *mut ffi::sqlite3_vfs, name: *const c_char, sync_dir: c_int) -> c_int {
    let unix = unix();
    let _gate = gate();
    if !name.is_null() {
        // SAFETY: SQLite passes a NUL-terminated path.
        let path = Path::new(OsStr::from_bytes(unsafe { CStr::from_ptr(name) }.to_bytes()));
        // A deletion is durable at once: nothing of the file is left to cut.
        lock(&FILES).remove(path);
    }
    // SAFETY: `unix` is the registered unix VFS, whose xDelete ignores the VFS it is given.
    unsafe {
        match (*unix).xDelete {
            Some(delete) => delete(unix, name, sync_dir),
            None => ffi::SQLITE_IOERR_DELETE,
        }
    }
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock_file),
    xUnlock: Some(unlock_file),
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

/// Our part of `file`, and the unix file's methods.
///
/// # Safety
/// `file` is a file our `open` set up and SQLite has not closed.
unsafe fn parts<'a>(file: *mut ffi::sqlite3_file) -> (&'a File, &'a ffi::sqlite3_io_methods) {
    // SAFETY: per the caller, `file` holds a `File` whose `real` is an open unix file.
    unsafe {
        let ours = &*file.cast::<File>();
        (ours, &*(*ours.real).pMethods)
    }
}

/// `wrapped!(file, xMethod, missing, args)`: the unix file's `xMethod` with `args`, under
/// the gate, or `missing` if it has none. Call it inside `unsafe`, with `file` a file our
/// `open` set up.
macro_rules! wrapped {
    ($file:expr, $method:ident, $missing:expr $(, $arg:expr)*) => {{
        let _gate = gate();
        let (ours, methods) = parts($file);
        match methods.$method {
            Some(f) => f(ours.real $(, $arg)*),
            None => $missing,
        }
    }};
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes a file our `open` set up, once; our part is dropped after the
    // unix file is closed and never used again (the record lives on in FILES: closing a
    // file does not sync it).
    unsafe {
        let rc = wrapped!(file, xClose, ffi::SQLITE_OK);
        ptr::drop_in_place(file.cast::<File>());
        rc
    }
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (Ok(len), Ok(at)) = (usize::try_from(amount), u64::try_from(offset)) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    let Some(Role::Cut { syncs, .. }) = ROLE.get() else {
        // The witness writes as asked: only its syncs matter to the cut.
        // SAFETY: `file` is ours and open; the arguments are SQLite's, passed on.
        return unsafe { wrapped!(file, xWrite, ffi::SQLITE_IOERR_WRITE, data, amount, offset) };
    };
    let _gate = gate();
    // SAFETY: `file` is ours and open; `data` holds `amount` bytes (SQLite's contract).
    unsafe {
        let (ours, methods) = parts(file);
        // The record's lock keeps the old bytes and the write together against another
        // handle of the same file in this process.
        let mut record = lock(&ours.record);
        let mut old = vec![0u8; len];
        if let Some(read) = methods.xRead {
            // A short read (past the end) fills the rest with zeros.
            let rc = read(ours.real, old.as_mut_ptr().cast(), amount, offset);
            if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_IOERR_SHORT_READ {
                return rc;
            }
        }
        let Some(real_write) = methods.xWrite else { return ffi::SQLITE_IOERR_WRITE };
        let rc = real_write(ours.real, data, amount, offset);
        // Even a failed write may have written some of it: remember it all (the cut leaves
        // alone a sector whose bytes are not what this process wrote).
        // After the write: a sync the other process logs from now on began after it.
        let mark = syncs.metadata().map_or(u64::MAX, |m| m.len());
        record.wrote(mark, at, old, std::slice::from_raw_parts(data.cast::<u8>(), len).to_vec());
        rc
    }
}

unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // Before the sync takes effect, and before taking the gate (the cut takes it whole).
    if SYNCS_LEFT.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1)) == Ok(1) {
        cut(Cause::Sync);
    }
    let _gate = gate();
    // SAFETY: `file` is ours and open.
    unsafe {
        let (ours, methods) = parts(file);
        if let Some(Role::Witness { syncs }) = ROLE.get() {
            let path = lock(&ours.record).path.clone();
            let line = format!("{} {}\n", size_of_real(ours.real), path.display());
            // One append, before the sync begins: the cut sees every sync that may have
            // happened before it (one that fails to be logged fails as a sync).
            if (&*syncs).write_all(line.as_bytes()).is_err() {
                return ffi::SQLITE_IOERR_FSYNC;
            }
        }
        let (upto, size) = {
            let record = lock(&ours.record);
            (record.next_seq, size_of_real(ours.real))
        };
        let Some(real_sync) = methods.xSync else { return ffi::SQLITE_IOERR_FSYNC };
        let rc = real_sync(ours.real, flags);
        if rc == ffi::SQLITE_OK {
            let mut record = lock(&ours.record);
            // A truncation while it ran is durable too.
            let size = size.min(size_of_real(ours.real));
            record.synced(upto, size);
        }
        rc
    }
}

unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    let _gate = gate();
    // SAFETY: `file` is ours and open.
    unsafe {
        let (ours, methods) = parts(file);
        let mut record = lock(&ours.record);
        let Some(real_truncate) = methods.xTruncate else { return ffi::SQLITE_IOERR_TRUNCATE };
        let rc = real_truncate(ours.real, size);
        if rc == ffi::SQLITE_OK {
            record.truncated(u64::try_from(size).unwrap_or(0));
        }
        rc
    }
}

// The rest is the unix file's own, under the gate.

unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    data: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: `file` is ours and open; the arguments are SQLite's, passed on.
    unsafe { wrapped!(file, xRead, ffi::SQLITE_IOERR_READ, data, amount, offset) }
}

unsafe extern "C" fn file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xFileSize, ffi::SQLITE_IOERR_FSTAT, size) }
}

unsafe extern "C" fn lock_file(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xLock, ffi::SQLITE_OK, level) }
}

unsafe extern "C" fn unlock_file(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xUnlock, ffi::SQLITE_OK, level) }
}

unsafe extern "C" fn check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    // SAFETY: as for read; `out` is SQLite's to write.
    unsafe {
        wrapped!(
            file,
            xCheckReservedLock,
            {
                *out = 0;
                ffi::SQLITE_OK
            },
            out
        )
    }
}

unsafe extern "C" fn file_control(file: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xFileControl, ffi::SQLITE_NOTFOUND, op, arg) }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xSectorSize, SECTOR as c_int) }
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // The unix VFS's answer (SQLITE_IOCAP_POWERSAFE_OVERWRITE): the cut honours it.
    // SAFETY: as for read.
    unsafe { wrapped!(file, xDeviceCharacteristics, 0) }
}

unsafe extern "C" fn shm_map(
    file: *mut ffi::sqlite3_file,
    page: c_int,
    page_size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xShmMap, ffi::SQLITE_IOERR_SHMMAP, page, page_size, extend, out) }
}

unsafe extern "C" fn shm_lock(file: *mut ffi::sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xShmLock, ffi::SQLITE_IOERR_SHMLOCK, offset, n, flags) }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // A memory barrier, no I/O: no gate (the cut does not look at the -shm).
    // SAFETY: `file` is ours and open.
    unsafe {
        let (ours, methods) = parts(file);
        if let Some(barrier) = methods.xShmBarrier {
            barrier(ours.real);
        }
    }
}

unsafe extern "C" fn shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xShmUnmap, ffi::SQLITE_OK, delete) }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: as for read; `out` is SQLite's to write.
    unsafe {
        wrapped!(
            file,
            xFetch,
            {
                *out = ptr::null_mut();
                ffi::SQLITE_OK
            },
            offset,
            amount,
            out
        )
    }
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, offset: i64, page: *mut c_void) -> c_int {
    // SAFETY: as for read.
    unsafe { wrapped!(file, xUnfetch, ffi::SQLITE_OK, offset, page) }
}

/// What set the cut off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The armed sync came.
    Sync,
    /// The parent asked for it.
    Command,
}

/// Cuts the power at the `n`th sync from now (1: the next), just before it takes effect.
pub fn cut_at_sync(n: u64) {
    SYNCS_LEFT.store(n, Ordering::SeqCst);
}

/// What one cut did, written to the report file for the parent (one line of `key=value`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// 1 if the armed sync set it off, 0 if the parent did.
    pub at_sync: u64,
    /// Writes not yet synced when the power went.
    pub unsynced_writes: u64,
    /// Writes this process had not synced that a sync of the other process had.
    pub synced_by_other: u64,
    /// Sectors those writes touched (within the files' sizes).
    pub sectors: u64,
    /// Sectors that kept every write (it all reached the disk).
    pub kept: u64,
    /// Sectors back as they were at the last sync (none of it reached the disk).
    pub dropped: u64,
    /// Sectors with some of their writes but not the later ones.
    pub partial: u64,
    /// Sectors torn between two of those states, block by block.
    pub torn: u64,
    /// Sectors with garbage in some of the bytes written since the sync.
    pub garbled: u64,
    /// Sectors left alone because another process wrote them since.
    pub foreign: u64,
    /// Files cut back to a length they had since their last sync.
    pub shortened: u64,
    /// Bytes the cut changed or cut off: 0 means the cut was no worse than SIGKILL.
    pub bytes_changed: u64,
}

impl Report {
    fn fields(&mut self) -> [(&'static str, &mut u64); 12] {
        [
            ("at_sync", &mut self.at_sync),
            ("unsynced_writes", &mut self.unsynced_writes),
            ("synced_by_other", &mut self.synced_by_other),
            ("sectors", &mut self.sectors),
            ("kept", &mut self.kept),
            ("dropped", &mut self.dropped),
            ("partial", &mut self.partial),
            ("torn", &mut self.torn),
            ("garbled", &mut self.garbled),
            ("foreign", &mut self.foreign),
            ("shortened", &mut self.shortened),
            ("bytes_changed", &mut self.bytes_changed),
        ]
    }

    pub fn to_line(mut self) -> String {
        self.fields().iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join(" ")
    }

    pub fn parse(line: &str) -> Option<Self> {
        let mut report = Self::default();
        for pair in line.split_whitespace() {
            let (name, value) = pair.split_once('=')?;
            let value: u64 = value.parse().ok()?;
            *report.fields().into_iter().find(|(n, _)| *n == name)?.1 = value;
        }
        Some(report)
    }

    pub fn add(&mut self, mut other: Self) {
        for ((_, mine), (_, theirs)) in self.fields().into_iter().zip(other.fields()) {
            *mine += *theirs;
        }
    }
}

/// The power goes: waits for the I/O in flight, stops all new I/O for good, puts every
/// file in a state the disk could be in (see the module's device model), writes the
/// report and kills the process with SIGKILL: no destructor, no atexit handler, no
/// checkpoint runs.
pub fn cut(cause: Cause) -> ! {
    // Never given back: every other thread's next I/O waits here until the process dies.
    std::mem::forget(GATE.write().unwrap_or_else(PoisonError::into_inner));
    let Some(Role::Cut { seed, report: report_path, syncs }) = ROLE.get() else {
        panic!("the power is cut only in the process installed to have it cut")
    };
    let mut rng = fastrand::Rng::with_seed(*seed);
    let mut report = Report { at_sync: u64::from(cause == Cause::Sync), ..Report::default() };
    let others = OtherSyncs::read(syncs);
    {
        let files = lock(&FILES);
        let mut paths: Vec<&PathBuf> = files.keys().collect();
        // The same seed makes the same choices for the same writes.
        paths.sort();
        for path in paths {
            cut_file(path, &lock(&files[path]), others.of(path), &mut rng, &mut report);
        }
    }
    // The parent reads it once the process is gone; the page cache keeps it meanwhile.
    let _ = std::fs::write(report_path, report.to_line());
    die()
}

/// The signal no process can catch or ignore (9 on every Unix).
pub const SIGKILL: i32 = 9;

// The C library's, which std links already; declared here rather than taking the `libc`
// crate for two functions.
unsafe extern "C" {
    fn getpid() -> i32;
    fn kill(pid: i32, signal: i32) -> i32;
}

/// SIGKILL now, with nothing else: the parent went away, or the power cut is done.
pub fn die() -> ! {
    // SAFETY: getpid and kill (pid_t is an int on Linux) have no preconditions; SIGKILL
    // cannot be caught or ignored, so no handler of ours runs either.
    unsafe { kill(getpid(), SIGKILL) };
    loop {
        std::thread::park();
    }
}

fn read_at(file: &std::fs::File, offset: u64, len: usize) -> Vec<u8> {
    let mut buffer = vec![0u8; len];
    let mut done = 0;
    while done < len {
        match file.read_at(&mut buffer[done..], offset + done as u64) {
            Ok(0) | Err(_) => break,
            Ok(n) => done += n,
        }
    }
    buffer
}

/// The syncs the other process logged, by file: where each line starts in the log, and
/// the file's length when that sync began.
#[derive(Debug, Default)]
struct OtherSyncs(HashMap<PathBuf, OtherSync>);

/// The other process's syncs of one file, as far as the cut needs them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct OtherSync {
    /// Where its latest sync's line starts in the log: writes marked at or before it are
    /// durable.
    latest: u64,
    /// The greatest length the file had when one of them began: durable (but never more
    /// than the file's length now).
    length: u64,
}

impl OtherSyncs {
    fn read(log: &std::fs::File) -> Self {
        let len = log.metadata().map_or(0, |m| m.len());
        Self::parse(&read_at(log, 0, usize::try_from(len).unwrap_or(0)))
    }

    /// Lines of `<length> <path>`; a last line without its newline is being written (it is
    /// counted: that sync may have begun).
    fn parse(log: &[u8]) -> Self {
        let mut syncs = Self::default();
        let mut start = 0u64;
        for line in log.split_inclusive(|&b| b == b'\n') {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            let text = String::from_utf8_lossy(text);
            if let Some((length, path)) = text.split_once(' ')
                && let Ok(length) = length.parse::<u64>()
            {
                let sync = syncs.0.entry(PathBuf::from(path)).or_default();
                sync.latest = start;
                sync.length = sync.length.max(length);
            }
            start += line.len() as u64;
        }
        syncs
    }

    fn of(&self, path: &Path) -> Option<OtherSync> {
        self.0.get(path).copied()
    }
}

/// One file at the power cut.
fn cut_file(
    path: &Path,
    record: &Record,
    other: Option<OtherSync>,
    rng: &mut fastrand::Rng,
    report: &mut Report,
) {
    // What the other process's last sync of this file found written is durable: only the
    // writes made after it began are not.
    let unsynced: Vec<&Write> =
        record.writes.iter().filter(|w| other.is_none_or(|o| w.mark > o.latest)).collect();
    report.synced_by_other += (record.writes.len() - unsynced.len()) as u64;
    if unsynced.is_empty() {
        return;
    }
    // Written directly, beside SQLite's descriptors: what this leaves in the page cache is
    // what the disk held when the power came back.
    let Ok(file) = OpenOptions::new().read(true).write(true).open(path) else { return };
    let Ok(size) = file.metadata().map(|m| m.len()) else { return };
    report.unsynced_writes += unsynced.len() as u64;
    let synced_size = other.map_or(record.synced_size, |o| record.synced_size.max(o.length.min(size)));

    let mut sectors: BTreeMap<u64, Vec<&Write>> = BTreeMap::new();
    for &w in &unsynced {
        for sector in w.offset / SECTOR..w.end().div_ceil(SECTOR) {
            sectors.entry(sector).or_default().push(w);
        }
    }
    for (sector, writes) in sectors {
        let start = sector * SECTOR;
        if start >= size {
            continue;
        }
        let current = read_at(&file, start, (SECTOR.min(size - start)) as usize);
        report.sectors += 1;
        let Some(states) = states(&current, start, &writes) else {
            report.foreign += 1;
            continue;
        };
        let n = writes.len();
        let chosen = match rng.u8(..100) {
            0..35 => {
                report.kept += 1;
                continue;
            }
            35..65 => {
                report.dropped += 1;
                states[0].clone()
            }
            65..80 if n > 1 => {
                report.partial += 1;
                states[rng.usize(1..n)].clone()
            }
            65..80 => {
                report.dropped += 1;
                states[0].clone()
            }
            80..92 => {
                report.torn += 1;
                let a = rng.usize(..=n);
                let b = (a + rng.usize(1..=n)) % (n + 1);
                let mut torn = states[a].clone();
                for (block, from) in torn.chunks_mut(BLOCK).zip(states[b].chunks(BLOCK)) {
                    if rng.bool() {
                        block.copy_from_slice(from);
                    }
                }
                torn
            }
            _ => {
                report.garbled += 1;
                let mut garbled = states[rng.usize(..=n)].clone();
                // Garbage only where this sector was written since the sync (see
                // POWERSAFE_OVERWRITE in the module's docs), in one 512-byte block.
                let block = rng.usize(..garbled.len().div_ceil(BLOCK)) * BLOCK;
                for (i, byte) in garbled.iter_mut().enumerate().skip(block).take(BLOCK) {
                    let at = start + i as u64;
                    if writes.iter().any(|w| (w.offset..w.end()).contains(&at)) {
                        *byte = rng.u8(..);
                    }
                }
                garbled
            }
        };
        let changed = chosen.iter().zip(&current).filter(|(a, b)| a != b).count();
        if changed > 0 && file.write_all_at(&chosen, start).is_ok() {
            report.bytes_changed += changed as u64;
        }
    }

    // A file that grew since its last sync may come back at any length it had since.
    if size > synced_size && rng.bool() {
        let mut lengths: Vec<u64> = std::iter::once(synced_size)
            .chain(unsynced.iter().map(|w| w.end()))
            .filter(|&end| end >= synced_size && end < size)
            .collect();
        lengths.sort_unstable();
        lengths.dedup();
        let length = lengths[rng.usize(..lengths.len())];
        if file.set_len(length).is_ok() {
            report.shortened += 1;
            report.bytes_changed += size - length;
        }
    }
}

/// The states a sector could be in: `[k]` after the first `k` of `writes` (every write that
/// touched it since the last sync, in order), so `[writes.len()]` is `current`. Worked back
/// from `current` by putting back what each write overwrote, which must still hold what
/// the write wrote: `None` if it does not (another process wrote there since; the sector
/// is then left as it is, which is always a state a disk could be in).
fn states(current: &[u8], start: u64, writes: &[&Write]) -> Option<Vec<Vec<u8>>> {
    let mut states = vec![current.to_vec()];
    for w in writes.iter().rev() {
        let mut state = states.last().expect("one state at least").clone();
        let lo = w.offset.max(start);
        let hi = w.end().min(start + state.len() as u64);
        if lo < hi {
            let in_sector = (lo - start) as usize..(hi - start) as usize;
            let in_write = (lo - w.offset) as usize..(hi - w.offset) as usize;
            if state[in_sector.clone()] != w.new[in_write.clone()] {
                return None;
            }
            state[in_sector].copy_from_slice(&w.old[in_write]);
        }
        states.push(state);
    }
    states.reverse();
    Some(states)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(seq: u64, offset: u64, old: &[u8], new: &[u8]) -> Write {
        Write { seq, mark: 0, offset, old: old.to_vec(), new: new.to_vec() }
    }

    #[test]
    fn a_sectors_states_run_from_the_last_sync_to_now_write_by_write() {
        // Sector 0 held "aaaa"; "bb" went over its start, then "c" over its second byte.
        let first = write(0, 0, b"aa", b"bb");
        let second = write(1, 1, b"b", b"c");
        let states = states(b"bcaa", 0, &[&first, &second]).unwrap();
        assert_eq!(states, [b"aaaa".to_vec(), b"bbaa".to_vec(), b"bcaa".to_vec()]);
    }

    #[test]
    fn a_sector_another_process_wrote_since_is_left_alone() {
        let ours = write(0, 0, b"aa", b"bb");
        assert_eq!(states(b"xbaa", 0, &[&ours]), None);
    }

    #[test]
    fn the_other_process_s_syncs_are_read_by_file_latest_and_longest() {
        let log = b"4096 /d/petstore.db-wal\n8192 /d/petstore.db\n2048 /d/petstore.db-wal\n100 /d/petstore.d";
        let syncs = OtherSyncs::parse(log);
        assert_eq!(syncs.of(Path::new("/d/petstore.db-wal")), Some(OtherSync { latest: 44, length: 4096 }));
        assert_eq!(syncs.of(Path::new("/d/petstore.db")), Some(OtherSync { latest: 24, length: 8192 }));
        // A line being written counts: that sync may have begun.
        assert_eq!(syncs.of(Path::new("/d/petstore.d")), Some(OtherSync { latest: 68, length: 100 }));
        assert_eq!(syncs.of(Path::new("/d/other")), None);
    }

    #[test]
    fn a_report_survives_its_line() {
        let report = Report { at_sync: 1, sectors: 7, torn: 2, bytes_changed: 4096, ..Report::default() };
        assert_eq!(Report::parse(&report.to_line()), Some(report));
    }
}
