//! The memory store's markdown export and import, and the last file
//! error (`claw_io_error`).

use super::*;

/// Bytes of work buffer `claw_memory_export` needs now (0 when the store
/// cannot be read; `claw_memory_export` then says so).
#[unsafe(no_mangle)]
pub extern "C" fn claw_memory_export_size() -> usize {
    with_state(0, |_, p| crate::markdown::export_work_size(p).unwrap_or(0))
}

/// `export_memory()`: MEMORY.md of the store, exactly what recall() says
/// key by key, at `work[*off..*off + *len)`.
///
/// # Safety
/// `work` valid for writes of `work_len` bytes; `off`, `len` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_export(
    work: *mut u8,
    work_len: usize,
    off: *mut usize,
    len: *mut usize,
) -> claw_status_t {
    if off.is_null() || len.is_null() {
        return Status::WorkTooSmall as claw_status_t;
    }
    // SAFETY: per this function's contract (a NULL or empty buffer is an
    // empty slice).
    let work: &mut [u8] = unsafe { crate::ffi::work_slice(work, work_len) }.unwrap_or(&mut []);
    let r = with_state(Err(Status::Busy), |_, p| {
        crate::markdown::export(p, work).map_err(|e| match e {
            crate::markdown::ExportError::TooSmall => Status::WorkTooSmall,
            crate::markdown::ExportError::Io(_) => Status::StoreUnreadable,
        })
    });
    if let Ok((o, n)) = r {
        // SAFETY: both valid per the contract.
        unsafe {
            off.write(o);
            len.write(n);
        }
    }
    done(r.map(|_| ()))
}

/// A line `claw_memory_import` skipped.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct claw_import_bad_t {
    /// Its number (1-based).
    pub line: u32,
    /// Why (`claw_import_why_text`).
    pub why: u8,
}

/// What `claw_memory_import` did.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct claw_import_result_t {
    /// Distinct keys the text held (on success); pairs stored before the
    /// failing line (`CLAW_STATUS_IMPORT_WRITE`).
    pub keys: u32,
    /// Lines skipped (non-strict); the first `bad_max` are in `bad`.
    pub bad: u32,
    /// The bad or failing line (strict mode, write failure).
    pub line: u32,
    /// Why that line is bad.
    pub why: u8,
}

/// The text of a skipped line's reason.
#[unsafe(no_mangle)]
pub extern "C" fn claw_import_why_text(why: u8) -> *const c_char {
    use crate::markdown::Why;
    let w = [
        Why::NotItem,
        Why::NoClose,
        Why::NoColon,
        Why::BadEscape,
        Why::KeyLength,
        Why::ValueLength,
        Why::NotUtf8,
    ]
    .into_iter()
    .find(|w| *w as u8 == why);
    w.map_or(c"".as_ptr(), |w| w.c_text().as_ptr())
}

/// Work buffer `claw_memory_import` needs, in bytes.
pub const CLAW_IMPORT_WORK: usize = 1024;
const _: () = assert!(CLAW_IMPORT_WORK == crate::markdown::IMPORT_WORK);

/// `import_memory(text, strict)`: see `docs/SESSIONS.md`. Skipped lines go
/// to `bad[0..bad_max)`.
///
/// # Safety
/// `text` valid for `len` bytes; `work` valid for writes of
/// `CLAW_IMPORT_WORK` bytes; `bad` NULL or valid for writes of `bad_max`
/// elements; `result` valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_memory_import(
    text: *const u8,
    len: usize,
    strict: bool,
    work: *mut u8,
    bad: *mut claw_import_bad_t,
    bad_max: usize,
    result: *mut claw_import_result_t,
) -> claw_status_t {
    use crate::markdown::ImportError;
    // SAFETY: per this function's contract.
    let (Some(text), false) = (unsafe { bytes(text, len) }, result.is_null()) else {
        return Status::NotUtf8 as claw_status_t;
    };
    if let Err(s) = agent::check_text(text) {
        return s as claw_status_t;
    }
    let bad: &mut [claw_import_bad_t] = if bad.is_null() || bad_max > isize::MAX as usize / 8 {
        &mut []
    } else {
        // SAFETY: non-NULL, valid for `bad_max` elements per the contract.
        unsafe { core::slice::from_raw_parts_mut(bad, bad_max) }
    };
    // SAFETY: valid for writes of CLAW_IMPORT_WORK bytes per the contract.
    let Some(work) = (unsafe { out_slice(work.cast(), CLAW_IMPORT_WORK) }) else {
        return Status::WorkTooSmall as claw_status_t;
    };
    // Only the count is kept through the import (the result is put
    // together after it: not on the frame the store's fold runs under).
    let mut nbad = 0u32;
    let r = with_state(Err(ImportError::Io(crate::port::Errno::EIO)), |_, p| {
        crate::markdown::import(p, text, strict, work, |line, why| {
            if let Some(b) = bad.get_mut(nbad as usize) {
                *b = claw_import_bad_t {
                    line,
                    why: why as u8,
                };
            }
            nbad = nbad.saturating_add(1);
        })
    });
    let mut res = claw_import_result_t {
        bad: nbad,
        ..Default::default()
    };
    let status = match r {
        Ok(n) => {
            res.keys = n;
            Status::Ok
        }
        Err(ImportError::Bad(line, why)) => {
            res.line = line;
            res.why = why as u8;
            Status::ImportLine
        }
        Err(ImportError::Full) => Status::ImportFull,
        Err(ImportError::Write(line, n)) => {
            res.line = line;
            res.keys = n;
            Status::ImportWrite
        }
        Err(ImportError::Io(_)) => Status::StoreUnreadable,
    };
    // SAFETY: non-NULL, valid per the contract.
    unsafe { result.write(res) };
    status as claw_status_t
}

/// The last failed file operation of the previous `claw_*` call (so that an
/// error can name the file and the cause): returns its errno, and writes its
/// path NUL-terminated into `path` (cut to `path_max`). 0 when that call
/// had none (a file that was not there to read does not count).
///
/// # Safety
/// `path` NULL or valid for writes of `path_max` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn claw_io_error(path: *mut c_char, path_max: usize) -> i32 {
    // SAFETY: per this function's contract.
    let mut none: [u8; 0] = [];
    let out = unsafe { crate::ffi::out_slice(path, path_max) }.unwrap_or(&mut none);
    crate::ffi::last_io_error(out)
}
